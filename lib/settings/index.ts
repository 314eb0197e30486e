export type { Settings } from './types.js';
export { loadSettings, loadSettingsWithSources, type LoadSettingsOptions, type SettingSource } from './load.js';
export { PROPERTY_DEFINITIONS, ruleDerivedEnv, defaultSettings, type PropertyDefinition } from './definitions.js';
export { findUnsafeDefaults, enforceSafeDefaults, type UnsafeDefault, type SuppliedParts } from './unsafe.js';

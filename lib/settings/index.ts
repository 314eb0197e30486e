export type { Settings } from './types.js';
export { loadSettings, type LoadSettingsOptions } from './load.js';
export { PROPERTY_DEFINITIONS, ruleDerivedEnv, defaultSettings, type PropertyDefinition } from './definitions.js';
export { findUnsafeDefaults, enforceSafeDefaults, type UnsafeDefault, type SuppliedParts } from './unsafe.js';

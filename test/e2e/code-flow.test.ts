import { codeFlows } from './flows/code-flow.js';

codeFlows('memory', () => ({}));

import { tokenRaces } from '../e2e/flows/token-races.js';

tokenRaces('memory', () => ({}));

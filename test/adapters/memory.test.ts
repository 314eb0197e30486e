import { createMemoryStore } from '../../adapters/memory.js';
import { describeAdapterContract } from './contract.js';

describeAdapterContract('memory', async () => createMemoryStore({ sweepIntervalMs: 200 }));

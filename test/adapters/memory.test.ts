import { createMemoryStore } from '../../adapters/memory.js';
import { describeBatchContract } from './batch-contract.js';
import { describeAdapterContract } from './contract.js';

describeAdapterContract('memory', async () => createMemoryStore({ sweepIntervalMs: 200 }));
describeBatchContract('memory', async () => createMemoryStore({ sweepIntervalMs: 200 }));

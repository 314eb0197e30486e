/** A free TCP port for a process a test starts, drawn at random below the kernel's ephemeral range. */
export function freePort(): Promise<number>;

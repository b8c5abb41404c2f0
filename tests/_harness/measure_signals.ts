/**
 * The signals with which the bench (and tests/upload_burst_test.ts) tells its child processes to
 * start and to stop a measurement: the prober, the uploader and the service's event-loop watcher.
 * Not SIGUSR1: Deno, like Node, opens its inspector on SIGUSR1 whether or not the process listens
 * for it, and B3's service, uploader and prober, so signalled, then ran with a debugger server
 * and reported every fetch and node:http chunk to it (its network events) through the burst.
 */
export const START_SIGNAL = "SIGHUP";
export const STOP_SIGNAL = "SIGUSR2";

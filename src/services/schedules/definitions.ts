// What a schedule is (its name, the job it enqueues, and for per-network schedules which networks
// it runs for), declared by the service that claims and enqueues the runs. The list of schedules
// itself is the job runtime's (src/jobs/schedules.ts), handed to the service when it is built.
import type { ScheduleName } from '../../config/index.js';
import type { Network } from '../networks/index.js';

export interface ScheduleDefinition {
  name: ScheduleName;
  /** The job type it enqueues; a schedule whose type this build lacks is listed, never fired. */
  job: string;
  description: string;
  /**
   * Per-network schedules run one job per network (`{ network: id }`) for each enabled and
   * configured network this accepts; the others run one job without parameters.
   */
  perNetwork?: (network: Network) => boolean;
}

// Every job type, listed explicitly so the compiler checks the wiring. A new type is appended here.
import type { JobType } from '../registry.js';
import { maintenancePrune } from './maintenance-prune.js';

export const jobTypes: JobType[] = [maintenancePrune];

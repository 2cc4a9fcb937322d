// Every job type, listed explicitly so the compiler checks the wiring. A new type is appended here.
import type { JobType } from '../registry.js';
import { advertisersSync } from './advertisers-sync.js';
import { maintenancePrune } from './maintenance-prune.js';
import { ordersPoll } from './orders-poll.js';

export const jobTypes: JobType[] = [maintenancePrune, advertisersSync, ordersPoll];

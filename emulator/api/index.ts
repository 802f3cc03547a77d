import type { Operation } from "../runtime";
import { dashboardOperations } from "./dashboards";
import { organizationOperations } from "./organization";

/** Every operation of the emulated API (seed §4 plus the real service's reads the provider needs). */
export const operations: Operation[] = [...organizationOperations, ...dashboardOperations];

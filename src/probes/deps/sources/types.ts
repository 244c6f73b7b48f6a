import type { SnapshotAdvisory, SnapshotSource } from "../advisory-snapshot.ts";
import type { RecordFilter } from "./osv-record.ts";

/** What one source gave the builder, before advisories shared with other sources are merged. */
export interface SourceReading {
  source: Omit<SnapshotSource, "advisories" | "newest_record">;
  advisories: SnapshotAdvisory[];
}

export type { RecordFilter };

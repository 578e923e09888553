-- Snapshots and forks (DESIGN.md §7): every snapshot a sandbox took, with
-- its size, the time it was paused, its parent (for the snapshot of a
-- fork) and the sandboxes forked from it since; a failed one with its
-- error. A view over sandbox_event: a rebuild keeps it.
CREATE VIEW audit_sandbox_snapshots AS
SELECT e.aggregate_id AS sandbox_id,
       e.seq,
       e.metadata ->> 'snapshot_id' AS snapshot_id,
       e.metadata ->> 'parent_snapshot' AS parent_snapshot,
       (e.metadata ->> 'size_bytes')::bigint AS size_bytes,
       (e.metadata ->> 'duration_us')::bigint AS duration_us,
       e.metadata ->> 'error' AS error,
       e.tenant_id,
       e.session_id,
       e.occurred_at,
       COALESCE((SELECT array_agg(f.aggregate_id ORDER BY f.occurred_at)
                   FROM sandbox_event f
                  WHERE f.event_type = 'SandboxCreated'
                    AND f.accepted
                    AND f.metadata ->> 'snapshot_id'
                        = e.metadata ->> 'snapshot_id'
                    AND e.metadata ->> 'snapshot_id' <> ''),
                '{}') AS forks
  FROM sandbox_event e
 WHERE e.event_type = 'SnapshotTaken'
   AND e.accepted;

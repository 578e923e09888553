-- The audit views: the questions DESIGN.md §8 asks of a sandbox, answered
-- from the projections and the events' payloads (sandbox_event.metadata).
-- Views only, no tables: `sbx projections rebuild` truncates and refills
-- the tables under them, and they read the new rows. Every view reads
-- accepted events only; a superseded append changed nothing. `sbx audit`
-- and `sbx telemetry` print them.

-- How the scheduler placed a claim: one row per accepted decision,
-- "ReuseChosen" (an idle sandbox of the claim's session; score and reason
-- are the reuse check's, reuse_mode as_is, venv or fork) or "Placed" (a
-- node, with its pool; score is the node's, warm whether the scheduler
-- expected a warm pool sandbox). proposed_sandbox_id is the decision's
-- sandbox; sandbox_id the one the claim was then bound to (an executor
-- may hand a warm pool sandbox instead of creating the proposed one), or
-- the proposed one while unbound.
CREATE VIEW audit_claim_placements AS
SELECT d.aggregate_id                                  AS claim_id,
       d.seq,
       d.event_type                                    AS decision,
       d.metadata->>'sandbox_id'                       AS proposed_sandbox_id,
       coalesce(b.metadata->>'sandbox_id', d.metadata->>'sandbox_id')
                                                       AS sandbox_id,
       b.seq IS NOT NULL                               AS bound,
       d.metadata->>'node_id'                          AS node_id,
       d.metadata->>'pool'                             AS pool,
       (d.metadata->>'warm')::boolean                  AS warm,
       d.metadata->>'mode'                             AS reuse_mode,
       (d.metadata->>'score')::double precision        AS score,
       d.metadata->>'reason'                           AS reason,
       d.tenant_id,
       d.session_id,
       d.occurred_at                                   AS decided_at,
       b.occurred_at                                   AS bound_at
FROM sandbox_event d
LEFT JOIN LATERAL (
    SELECT b.seq, b.metadata, b.occurred_at FROM sandbox_event b
    WHERE b.aggregate_id = d.aggregate_id AND b.accepted
      AND b.event_type = 'ClaimBound' AND b.seq > d.seq
      AND NOT EXISTS (
          SELECT 1 FROM sandbox_event x
          WHERE x.aggregate_id = d.aggregate_id AND x.accepted
            AND x.event_type IN ('ReuseChosen', 'Placed')
            AND x.seq > d.seq AND x.seq < b.seq)
    ORDER BY b.seq LIMIT 1) b ON true
WHERE d.aggregate = 'claim' AND d.accepted
  AND d.event_type IN ('ReuseChosen', 'Placed');

-- Who created a sandbox and why: one row per sandbox. origin is "claim"
-- (made for created_for_claim) or "pool" (a warm sandbox of pool, made
-- ahead of any claim). claim_id is the claim it was made for, or the first
-- claim that leased it; tenant, user and session are that claim's, and
-- task / requested_class / request_id come from its ClaimRequested.
-- placement_reason is the scheduler's reason for giving that claim this
-- sandbox (audit_claim_placements); created_by is the producer of
-- SandboxCreated.
CREATE VIEW audit_sandbox_created AS
SELECT s.sandbox_id,
       s.origin,
       s.pool,
       cr.metadata->>'claim_id'               AS created_for_claim,
       s.claim_id,
       coalesce(s.tenant_id, c.tenant_id)     AS tenant_id,
       coalesce(s.user_id, c.user_id)         AS user_id,
       coalesce(s.session_id, c.session_id)   AS session_id,
       rq.metadata->'task'->>'text'           AS task,
       rq.metadata->>'requested_class'        AS requested_class,
       c.request_id,
       pl.reason                              AS placement_reason,
       s.node_id,
       s.resource_class,
       s.template_id,
       s.runtime_provider,
       s.cpu,
       s.memory_mb,
       s.network_profile,
       cr.producer                            AS created_by,
       s.created_at,
       s.state
FROM sandbox_instance s
LEFT JOIN claim c ON c.claim_id = s.claim_id
LEFT JOIN LATERAL (
    SELECT e.metadata, e.producer FROM sandbox_event e
    WHERE e.aggregate_id = s.sandbox_id AND e.accepted
      AND e.event_type = 'SandboxCreated'
    ORDER BY e.seq LIMIT 1) cr ON true
LEFT JOIN LATERAL (
    SELECT e.metadata FROM sandbox_event e
    WHERE e.aggregate_id = s.claim_id AND e.accepted
      AND e.event_type = 'ClaimRequested'
    ORDER BY e.seq LIMIT 1) rq ON true
LEFT JOIN LATERAL (
    SELECT p.reason FROM audit_claim_placements p
    WHERE p.claim_id = s.claim_id AND p.sandbox_id = s.sandbox_id
    ORDER BY p.seq DESC LIMIT 1) pl ON true;

-- Why the planner chose a claim's size: one row per claim. planner is
-- "rules" or "llm" (fallback_reason: why llm fell back to rules);
-- recommended_* and confidence are its intent, planner_reason its own
-- words (signals, telemetry). decision is the guard's ("approved" or
-- "rejected"), actual_class / cpu / memory_mb what it granted, clamped
-- whether the intent asked for more than that class gives, guard_reasons
-- why. execs .. oom: what the work under the claim's leases really used.
CREATE VIEW audit_claim_sizing AS
SELECT c.claim_id,
       c.tenant_id,
       c.user_id,
       c.session_id,
       c.phase,
       c.sandbox_id,
       rq.metadata->'task'->>'text'     AS task,
       rq.metadata->>'requested_class'  AS requested_class,
       a.signature,
       a.planner,
       a.fallback_reason,
       a.planner_input_hash,
       a.recommended_class,
       a.recommended_cpu,
       a.recommended_memory_mb,
       a.confidence,
       a.reason                         AS planner_reason,
       a.decision,
       a.actual_class,
       a.cpu,
       a.memory_mb,
       a.clamped,
       a.guard_reasons,
       a.planned_at,
       a.decided_at,
       a.execs,
       a.duration_us,
       a.peak_cpu,
       a.peak_memory_mb,
       a.oom,
       c.reason                         AS claim_reason,
       c.created_at
FROM claim c
LEFT JOIN sandbox_allocation a ON a.claim_id = c.claim_id
LEFT JOIN LATERAL (
    SELECT e.metadata FROM sandbox_event e
    WHERE e.aggregate_id = c.claim_id AND e.accepted
      AND e.event_type = 'ClaimRequested'
    ORDER BY e.seq LIMIT 1) rq ON true;

-- Which claims and sessions held a sandbox: one row per lease. reuse is
-- true when the sandbox had been leased before. chosen_by, score,
-- choice_reason, reuse_mode and warm are the scheduler's decision that
-- gave the claim this sandbox (audit_claim_placements): "ReuseChosen"
-- with the reuse check's score and reason, or "Placed". execs counts the
-- execs that finished under the lease; ended_by / end_reason say how the
-- lease ended.
CREATE VIEW audit_sandbox_leases AS
SELECT l.sandbox_id,
       l.lease_version,
       l.lease_owner                          AS claim_id,
       l.tenant_id,
       c.user_id,
       l.session_id,
       l.reuse,
       ch.decision                            AS chosen_by,
       ch.score,
       ch.reason                              AS choice_reason,
       ch.reuse_mode,
       ch.warm,
       l.acquired_at,
       l.heartbeat_at,
       l.expires_at,
       l.ended_at,
       l.ended_by,
       l.end_reason,
       (SELECT count(*) FROM sandbox_event x
        WHERE x.aggregate_id = l.sandbox_id AND x.accepted
          AND x.event_type = 'ExecFinished'
          AND x.lease_version = l.lease_version) AS execs
FROM sandbox_lease l
LEFT JOIN claim c ON c.claim_id = l.lease_owner
LEFT JOIN LATERAL (
    SELECT p.decision, p.score, p.reason, p.reuse_mode, p.warm
    FROM audit_claim_placements p
    WHERE p.claim_id = l.lease_owner AND p.sandbox_id = l.sandbox_id
    ORDER BY p.seq DESC LIMIT 1) ch ON true;

-- What a sandbox installed: one row per accepted EnvironmentUpdated, in
-- order (environment_version 1, 2, ...). packages lists the manifest's
-- installed_capabilities as "name==version" (other ecosystems than pip
-- prefixed, "npm:name==version"), sorted; packages_added / _removed are
-- the difference to the sandbox's previous manifest (an upgrade is both
-- added and removed). lease_version / lease_owner / session_id are of the
-- lease granted last before the update: the claim whose work changed it.
CREATE VIEW audit_sandbox_installs AS
WITH m AS (
    SELECT e.aggregate_id AS sandbox_id, e.seq, e.occurred_at,
           e.producer, e.metadata->'manifest' AS manifest,
           ARRAY(SELECT CASE WHEN coalesce(p->>'ecosystem', '')
                                  IN ('', 'pip') THEN ''
                             ELSE (p->>'ecosystem') || ':' END
                        || (p->>'name')
                        || CASE WHEN coalesce(p->>'version', '') = ''
                                THEN '' ELSE '==' || (p->>'version') END
                 FROM jsonb_array_elements(coalesce(
                     e.metadata->'manifest'->'installed_capabilities',
                     '[]'::jsonb)) p
                 ORDER BY 1) AS packages
    FROM sandbox_event e
    WHERE e.event_type = 'EnvironmentUpdated' AND e.accepted
), h AS (
    SELECT m.*,
           row_number() OVER w AS environment_version,
           lag(m.packages) OVER w AS previous
    FROM m
    WINDOW w AS (PARTITION BY m.sandbox_id ORDER BY m.seq)
)
SELECT h.sandbox_id,
       h.environment_version,
       h.seq,
       h.occurred_at,
       (g.metadata->>'lease_version')::bigint   AS lease_version,
       g.metadata->>'owner'                     AS lease_owner,
       g.session_id,
       h.manifest->>'fingerprint'               AS fingerprint,
       (h.manifest->>'dirty_level')::integer    AS dirty_level,
       ARRAY(SELECT jsonb_array_elements_text(coalesce(
                 h.manifest->'dirty_paths', '[]'::jsonb))) AS dirty_paths,
       h.manifest->>'pip_lock_hash'             AS pip_lock_hash,
       h.packages,
       ARRAY(SELECT p FROM unnest(h.packages) p
             WHERE p <> ALL (coalesce(h.previous, '{}'::text[]))
             ORDER BY p)                        AS packages_added,
       ARRAY(SELECT p FROM unnest(h.previous) p
             WHERE p <> ALL (h.packages)
             ORDER BY p)                        AS packages_removed,
       h.producer,
       h.manifest
FROM h
LEFT JOIN LATERAL (
    SELECT e.metadata, e.session_id FROM sandbox_event e
    WHERE e.aggregate_id = h.sandbox_id AND e.accepted
      AND e.event_type = 'LeaseGranted' AND e.seq < h.seq
    ORDER BY e.seq DESC LIMIT 1) g ON true;

-- When and why a sandbox left service: its hibernations and resumes,
-- taints, recycling (level: reset, fork or destroy), failure, loss and
-- termination, in order, with the reason each event gave.
CREATE VIEW audit_sandbox_lifecycle AS
SELECT e.aggregate_id               AS sandbox_id,
       e.seq,
       e.occurred_at,
       e.event_type,
       e.old_state,
       e.new_state,
       e.metadata->>'level'         AS recycle_level,
       e.metadata->>'reason'        AS reason,
       e.lease_version,
       e.producer
FROM sandbox_event e
WHERE e.aggregate = 'sandbox' AND e.accepted
  AND e.event_type IN ('Hibernated', 'Resumed', 'Tainted', 'RecycleStarted',
                       'SandboxFailed', 'SandboxLost', 'Terminated');

-- Reuse refusals: which idle sandbox a claim was not given, and why. The
-- scheduler says so in the reason of the claim's Placed ("...; reuse=false
-- sandbox=SB reason=WHY": the last one refused); a reuse check on the
-- sandbox says so in ReuseRejected (with its score). reason_code is the
-- reason up to its first ":", e.g. runtime_capability_mismatch.
CREATE VIEW audit_reuse_refusals AS
SELECT claim_id,
       sandbox_id,
       score,
       split_part(reason, ':', 1) AS reason_code,
       reason,
       source,
       tenant_id,
       session_id,
       occurred_at
FROM (
    SELECT e.aggregate_id AS claim_id, r[1] AS sandbox_id,
           NULL::double precision AS score, r[2] AS reason,
           e.event_type AS source, e.tenant_id, e.session_id, e.occurred_at
    FROM (SELECT e.*, regexp_match(e.metadata->>'reason',
                     'reuse=false sandbox=(\S+) reason=(.*)$') AS r
          FROM sandbox_event e
          WHERE e.event_type = 'Placed' AND e.accepted) e
    WHERE r IS NOT NULL
    UNION ALL
    SELECT e.metadata->>'claim_id', e.aggregate_id,
           (e.metadata->>'score')::double precision, e.metadata->>'reason',
           e.event_type, e.tenant_id, e.session_id, e.occurred_at
    FROM sandbox_event e
    WHERE e.event_type = 'ReuseRejected' AND e.accepted
) u;

-- Allocation telemetry per workload signature: how the planner sizes a
-- kind of work against what that work used. claims counts the claims
-- planned with the signature, measured_claims those with at least one
-- finished exec (the peaks, the OOM rate and the mean duration are over
-- those). recommended_class / actual_class are the most common;
-- recommended_cpu / _memory_mb the medians of the planner's intents;
-- p95_* are percentile_cont(0.95) of the per-claim peaks; oom_rate is
-- oom_claims / measured_claims; mean_duration_s the mean total exec time
-- of a claim.
CREATE VIEW allocation_telemetry AS
SELECT a.signature,
       count(*)                                          AS claims,
       count(*) FILTER (WHERE a.execs > 0)               AS measured_claims,
       mode() WITHIN GROUP (ORDER BY a.recommended_class) AS recommended_class,
       mode() WITHIN GROUP (ORDER BY a.actual_class)     AS actual_class,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY a.recommended_cpu)
                                                         AS recommended_cpu,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY a.recommended_memory_mb)
                                                         AS recommended_memory_mb,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY a.peak_cpu)
           FILTER (WHERE a.execs > 0)                    AS p95_peak_cpu,
       max(a.peak_cpu) FILTER (WHERE a.execs > 0)        AS max_peak_cpu,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY a.peak_memory_mb)
           FILTER (WHERE a.execs > 0)                    AS p95_peak_memory_mb,
       max(a.peak_memory_mb) FILTER (WHERE a.execs > 0)  AS max_peak_memory_mb,
       count(*) FILTER (WHERE a.oom)                     AS oom_claims,
       (count(*) FILTER (WHERE a.oom))::double precision
           / nullif(count(*) FILTER (WHERE a.execs > 0), 0) AS oom_rate,
       (avg(a.duration_us) FILTER (WHERE a.execs > 0))::double precision
           / 1e6                                         AS mean_duration_s,
       count(*) FILTER (WHERE a.clamped)                 AS clamped_claims,
       avg(a.confidence)                                 AS mean_confidence,
       max(a.planned_at)                                 AS last_planned_at
FROM sandbox_allocation a
WHERE a.signature IS NOT NULL
GROUP BY a.signature;

-- The live registry: every sandbox not terminated, failed or lost
-- (RECYCLING ones are on their way out but still hold their node), with
-- its node (and whether the node's last status was healthy), state,
-- current lease and how long it has been idle: seconds since its last
-- activity (lease, exec, release), or since it was created.
CREATE VIEW sandbox_registry_live AS
SELECT s.sandbox_id,
       s.state,
       s.node_id,
       n.healthy                 AS node_healthy,
       s.tenant_id,
       s.session_id,
       s.origin,
       s.pool,
       s.resource_class,
       s.lease_owner,
       s.lease_version,
       s.expires_at              AS lease_expires_at,
       s.tainted,
       s.leases,
       s.reuses,
       s.execs,
       s.created_at,
       s.last_active_at,
       floor(extract(epoch FROM now() - coalesce(s.last_active_at,
                                                 s.created_at)))::bigint
                                 AS idle_seconds
FROM sandbox_instance s
LEFT JOIN node n ON n.node_id = s.node_id
WHERE s.state NOT IN ('TERMINATED', 'FAILED', 'LOST');

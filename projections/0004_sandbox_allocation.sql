-- The resource planner's decisions and what the work really used, one row
-- per claim (the origin's task): the planner's input hash, which planner
-- answered (rules, or llm and why it fell back), the class it recommended
-- and the class the guard approved, and, from every ExecFinished under
-- the claim's leases, total exec time, peak CPU (cores: CPU time / wall
-- time of the busiest exec), peak memory and whether anything was OOM
-- killed. The planner learns from this table.
CREATE TABLE sandbox_allocation (
    claim_id            text PRIMARY KEY,
    tenant_id           text,
    session_id          text,
    signature           text,
    planner_input_hash  text,
    planner             text,
    fallback_reason     text,
    recommended_class   text,
    recommended_cpu     double precision,
    recommended_memory_mb bigint,
    confidence          double precision,
    reason              text,
    decision            text,
    actual_class        text,
    cpu                 double precision,
    memory_mb           bigint,
    clamped             boolean,
    guard_reasons       text,
    planned_at          timestamptz,
    decided_at          timestamptz,
    execs               bigint NOT NULL DEFAULT 0,
    duration_us         bigint NOT NULL DEFAULT 0,
    peak_cpu            double precision,
    peak_memory_mb      bigint,
    oom                 boolean NOT NULL DEFAULT false
);
CREATE INDEX sandbox_allocation_signature ON sandbox_allocation (signature);

-- The registry: the folded state of every claim and sandbox after its last
-- accepted event, the lease history of each sandbox and its environment.
-- The projector writes them from the log (src/projector/); every value
-- comes from events, never from the clock, so a rebuild equals them row
-- for row. Times are the events' occurred_at.

-- One agent's request for a sandbox (DESIGN.md §2, claim phases).
CREATE TABLE claim (
    claim_id         text PRIMARY KEY,
    tenant_id        text,
    user_id          text,
    session_id       text,
    request_id       text,
    correlation_id   text,
    phase            text NOT NULL,
    seq              bigint NOT NULL,
    resource_class   text,
    cpu              double precision,
    memory_mb        bigint,
    template         text,
    runtime          text,
    network_profile  text,
    workspace_id     text,
    node_id          text,
    sandbox_id       text,
    lease_version    bigint,
    lease_expires_at timestamptz,
    ttl_seconds      bigint,
    lease_seconds    bigint,
    attempts         integer NOT NULL,
    reason           text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE INDEX claim_session ON claim (tenant_id, session_id);
CREATE INDEX claim_sandbox ON claim (sandbox_id);

-- One runtime instance from creation to termination. claim_id is the
-- claim it was made for, or for a warm pool sandbox the first claim that
-- leased it; user_id is that claim's user. version is the aggregate's seq
-- (its optimistic-concurrency version); expires_at is when the current
-- lease ends unless renewed.
CREATE TABLE sandbox_instance (
    sandbox_id          text PRIMARY KEY,
    tenant_id           text,
    user_id             text,
    session_id          text,
    claim_id            text,
    node_id             text,
    origin              text,
    pool                text,
    runtime_provider    text,
    runtime_instance_id text,
    resource_class      text,
    template_id         text,
    template_digest     text,
    cpu                 double precision,
    memory_mb           bigint,
    network_profile     text,
    state               text NOT NULL,
    version             bigint NOT NULL,
    lease_owner         text,
    lease_version       bigint NOT NULL,
    tainted             boolean NOT NULL,
    taint_reason        text,
    recycle_level       text,
    reason              text,
    execs               bigint NOT NULL,
    leases              bigint NOT NULL,
    reuses              bigint NOT NULL,
    snapshots           bigint NOT NULL,
    ooms                bigint NOT NULL,
    startup_us          bigint,
    created_at          timestamptz NOT NULL,
    last_active_at      timestamptz,
    expires_at          timestamptz,
    updated_at          timestamptz NOT NULL
);
CREATE INDEX sandbox_instance_session ON sandbox_instance (tenant_id, session_id);
CREATE INDEX sandbox_instance_claim ON sandbox_instance (claim_id);
CREATE INDEX sandbox_instance_state ON sandbox_instance (state);

-- Every lease a sandbox was granted: which claim (and so which session)
-- held it, when it was last heard of (renewals and execs under it) and
-- how it ended: ended_by is the event that ended it (LeaseReleased,
-- LeaseExpired, RecycleStarted, SandboxFailed, SandboxLost).
CREATE TABLE sandbox_lease (
    sandbox_id    text NOT NULL,
    lease_version bigint NOT NULL,
    lease_owner   text NOT NULL,
    tenant_id     text,
    session_id    text,
    reuse         boolean NOT NULL,
    acquired_at   timestamptz NOT NULL,
    heartbeat_at  timestamptz NOT NULL,
    expires_at    timestamptz,
    ended_at      timestamptz,
    ended_by      text,
    end_reason    text,
    PRIMARY KEY (sandbox_id, lease_version)
);
CREATE INDEX sandbox_lease_owner ON sandbox_lease (lease_owner);
CREATE INDEX sandbox_lease_session ON sandbox_lease (tenant_id, session_id);

-- What is in a sandbox: the base image, the dependencies, the workspace,
-- the last snapshot. environment_version counts EnvironmentUpdated
-- events; dependency_hash is FNV-1a 64 of the manifest's pip, npm and apt
-- lock hashes; dirty_level as in EnvironmentManifest (0 clean .. 3
-- unknown).
CREATE TABLE sandbox_environment (
    sandbox_id          text PRIMARY KEY,
    base_image_digest   text,
    dependency_hash     text,
    workspace_id        text,
    snapshot_id         text,
    environment_version bigint NOT NULL,
    dirty_level         integer NOT NULL,
    fingerprint         text,
    manifest            jsonb,
    updated_at          timestamptz NOT NULL
);

-- The audit trail: every event of the log, accepted or superseded.
-- Later migrations add the projections (claim, sandbox_instance, ...).
CREATE TABLE sandbox_event (
    event_id        uuid PRIMARY KEY,
    aggregate       text NOT NULL CHECK (aggregate IN ('claim', 'sandbox')),
    aggregate_id    text NOT NULL,
    seq             bigint NOT NULL,
    event_type      text NOT NULL,
    old_state       text,
    new_state       text,
    accepted        boolean NOT NULL,
    reason          text,
    request_id      text,
    correlation_id  text,
    causation_id    text,
    tenant_id       text,
    session_id      text,
    lease_version   bigint,
    producer        text NOT NULL,
    occurred_at     timestamptz NOT NULL,
    topic_partition integer NOT NULL,
    topic_offset    bigint NOT NULL,
    metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
    UNIQUE (topic_partition, topic_offset)
);

CREATE INDEX sandbox_event_aggregate ON sandbox_event (aggregate_id, seq);
CREATE INDEX sandbox_event_correlation ON sandbox_event (correlation_id);

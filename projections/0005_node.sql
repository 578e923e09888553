-- The latest status of every executor node, from sbx.nodes.v1
-- (NodeStatus heartbeats; a tombstone removes the node). at is the
-- node's own clock; topic_partition/topic_offset say which message this is.
CREATE TABLE node (
    node_id             text PRIMARY KEY,
    at                  timestamptz NOT NULL,
    healthy             boolean NOT NULL,
    draining            boolean NOT NULL,
    cpu_capacity        double precision NOT NULL,
    memory_mb_capacity  bigint NOT NULL,
    disk_gb_capacity    bigint NOT NULL,
    max_sandboxes       integer NOT NULL,
    cpu_committed       double precision NOT NULL,
    memory_mb_committed bigint NOT NULL,
    sandboxes           integer NOT NULL,
    recent_ooms         integer NOT NULL,
    heartbeat_seq       bigint NOT NULL,
    pools               jsonb NOT NULL,
    templates           jsonb NOT NULL,
    snapshots           jsonb NOT NULL,
    runtimes            jsonb NOT NULL,
    topic_partition     integer NOT NULL,
    topic_offset        bigint NOT NULL
);

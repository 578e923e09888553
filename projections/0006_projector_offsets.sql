-- The projector's position in the log: for each partition of the topics
-- it reads, the offset of the next message to project. It is updated
-- with compare-and-swap in the same transaction as the rows that message
-- produced, so every message is projected exactly once.
CREATE TABLE projector_offsets (
    topic       text NOT NULL,
    partition   integer NOT NULL,
    next_offset bigint NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (topic, partition)
);

-- Messages that do not decode: they have no event to project, but they
-- are counted here, so sandbox_event plus this table account for every
-- offset of the log.
CREATE TABLE projector_undecodable (
    topic           text NOT NULL,
    topic_partition integer NOT NULL,
    topic_offset    bigint NOT NULL,
    size            integer NOT NULL,
    reason          text NOT NULL,
    PRIMARY KEY (topic, topic_partition, topic_offset)
);

-- sandbox_event holds every append of the log. One event can be appended
-- more than once (a redelivery, which the fold calls "duplicate"), so a
-- row's key is where it sits in the log, not its event_id. Rejected
-- client commands (aggregate "request") are events of the log too.
ALTER TABLE sandbox_event DROP CONSTRAINT sandbox_event_pkey;
ALTER TABLE sandbox_event
    DROP CONSTRAINT sandbox_event_topic_partition_topic_offset_key;
ALTER TABLE sandbox_event ADD PRIMARY KEY (topic_partition, topic_offset);
ALTER TABLE sandbox_event DROP CONSTRAINT sandbox_event_aggregate_check;
ALTER TABLE sandbox_event ADD CONSTRAINT sandbox_event_aggregate_check
    CHECK (aggregate IN ('claim', 'sandbox', 'request'));
CREATE INDEX sandbox_event_event_id ON sandbox_event (event_id);

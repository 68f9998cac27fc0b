-- PostgreSQL twin of ../0030_listener_queue_by_time.sql: a terminal's
-- record is one record by its terminal, its capture instant and its
-- identity there, so the queue's uniqueness takes the instant in.
ALTER TABLE listener_queue DROP CONSTRAINT u__listener_queue__device_serial__event_id;
ALTER TABLE listener_queue ADD CONSTRAINT u__listener_queue__device_serial__occurred_at__event_id
    UNIQUE (device_serial, occurred_at, event_id);

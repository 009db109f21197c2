"""Language models: providers, routing per role, reliable calls, time boxes, usage telemetry."""

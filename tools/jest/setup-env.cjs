// Every test process: Apollo must never send telemetry or probe cloud metadata addresses.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
process.env.LOG_LEVEL ??= 'silent';

// Imported before any Apollo module: Apollo packages send usage telemetry and probe cloud
// metadata addresses unless this is set. No traffic may leave the machine or cluster.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
export {};

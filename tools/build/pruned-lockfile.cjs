// The workspace's package-lock.json cut down to one app's runtime packages, so its image installs
// with `npm ci` exactly the versions the tests ran with, transitive packages included. Without it,
// an image installed the app's direct packages at pinned versions but resolved everything below
// them afresh at build time: two builds of one commit could run different code.

/**
 * Where Node finds package `name` required from the package at `from` (a lock path such as
 * `node_modules/a` or `node_modules/a/node_modules/b`, '' for the app): its own node_modules
 * first, then each enclosing one, up to the top.
 */
function resolve(packages, from, name) {
  for (let dir = from; ; ) {
    const candidate = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return undefined;
    const parent = dir.lastIndexOf('/node_modules/');
    dir = parent === -1 ? '' : dir.slice(0, parent);
  }
}

/**
 * What npm installs for a package: its dependencies, its optional ones where the lock has them
 * (one platform's binaries), and its peers except optional ones (npm leaves those out unless
 * something else needs them: @prisma/client's optional peer `prisma` is the CLI).
 */
function needsOf(entry) {
  const optionalPeers = new Set(Object.entries(entry.peerDependenciesMeta ?? {}).filter(([, meta]) => meta?.optional).map(([name]) => name));
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...Object.keys(entry.peerDependencies ?? {})
      .filter((name) => !optionalPeers.has(name))
      .map((name) => ({ name, optional: false })),
  ];
}

/**
 * The lock file (lockfileVersion 3) for `manifest` (an app's package.json, exact versions): the
 * workspace lock's entries reachable from its dependencies, at the same paths, so the tree npm
 * builds from it is the part of node_modules the app uses. Throws when a dependency is missing from
 * the workspace lock or pinned at another version than the lock holds.
 */
function prunedLockfile(workspaceLock, manifest) {
  const { packages } = workspaceLock;
  if (workspaceLock.lockfileVersion !== 3 || !packages) throw new Error('package-lock.json: expected lockfileVersion 3 with `packages`');
  const kept = new Map();
  /** Reached only through optional dependencies (a platform's binaries): npm may skip them. */
  const optionalOnly = new Set();
  const visit = (from, need, viaOptional) => {
    const at = resolve(packages, from, need.name);
    const optional = viaOptional || need.optional;
    if (!at) {
      if (optional) return;
      throw new Error(`package-lock.json has no ${need.name} for ${from || manifest.name}: run npm install`);
    }
    if (kept.has(at) && (optional || !optionalOnly.has(at))) return;
    if (optional) optionalOnly.add(at);
    else optionalOnly.delete(at); // needed after all: its own needs are needed too, so walk them again
    // A dev flag says what the workspace needs it for; the app needs it at run time.
    const { dev: _dev, devOptional: _devOptional, optional: _optional, ...entry } = packages[at];
    kept.set(at, entry);
    for (const next of needsOf(entry)) visit(at, next, optional);
  };
  for (const [name, version] of Object.entries(manifest.dependencies ?? {})) {
    const locked = packages[`node_modules/${name}`]?.version;
    if (locked !== version) throw new Error(`${manifest.name} pins ${name}@${version}, but package-lock.json holds ${locked ?? 'none'}: run npm install`);
    visit('', { name, optional: false }, false);
  }
  const root = { name: manifest.name, version: manifest.version, dependencies: manifest.dependencies ?? {}, ...(manifest.engines ? { engines: manifest.engines } : {}) };
  const entries = [...kept].sort(([a], [b]) => a.localeCompare(b)).map(([at, entry]) => [at, optionalOnly.has(at) ? { ...entry, optional: true } : entry]);
  return { name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages: { '': root, ...Object.fromEntries(entries) } };
}

module.exports = { prunedLockfile };

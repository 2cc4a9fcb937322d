// import() of an ES module at run time, for what only import() loads: Ink (top-level await, which
// require() refuses) for `cashtrack logs` on a terminal, and the configured extensions.
//
// The CLI's bundle (scripts/bundle-cli.js) is a CommonJS script that bin/cashtrack compiles from
// V8's code cache, and Node 20 loses a cached script's import() (the call throws
// ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING): the bundle swaps this module's body for a call of the
// import() bin/cashtrack hands it. So give an absolute URL or a package name, never a path relative
// to the caller, which would resolve from another directory in the bundle.
export function importModule<T>(specifier: string | URL): Promise<T> {
  return import(String(specifier)) as Promise<T>;
}

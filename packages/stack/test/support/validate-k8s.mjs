// Validates Kubernetes objects against the API schemas of kubernetes-models 5.1.0 (generated from
// Kubernetes 1.34's OpenAPI: it has PodSpec.hostnameOverride of 1.34, not workloadRef of 1.35).
// The package is ES modules only, which jest's CommonJS transform cannot load, so helm-chart.test.ts
// runs this as a child process: a JSON array of objects on stdin, a JSON array of
// { kind, name, error } on stdout, one per object (error null when it is valid).
// Kinds of CRDs (monitoring.coreos.com) are not Kubernetes API kinds: the test checks those.
import { readFileSync } from 'node:fs';

const objects = JSON.parse(readFileSync(0, 'utf8'));

/** `apps/v1` → `kubernetes-models/apps/v1`, `v1` → `kubernetes-models/v1`. */
async function modelOf(apiVersion, kind) {
  try {
    const models = await import(`kubernetes-models/${apiVersion}`);
    return models[kind];
  } catch {
    return undefined;
  }
}

const results = [];
for (const object of objects) {
  const name = object?.metadata?.name;
  const Model = await modelOf(object.apiVersion, object.kind);
  if (!Model) {
    results.push({ kind: object.kind, name, error: `no schema for ${object.apiVersion} ${object.kind}` });
    continue;
  }
  try {
    new Model(object).validate();
    results.push({ kind: object.kind, name, error: null });
  } catch (err) {
    results.push({ kind: object.kind, name, error: err instanceof Error ? err.message : String(err) });
  }
}
process.stdout.write(JSON.stringify(results));

// What a pod of deploy/k8s gets as its environment, worked out offline from the manifests (no cluster here):
// its container's `env` and `envFrom`, resolved against the ConfigMaps of the base and the Secrets of the
// templates (secrets.template.yaml), as the kubelet would.

// biome-ignore lint/suspicious/noExplicitAny: manifests are plain YAML documents
type Manifest = any;

interface EnvVariable {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
  };
}

interface EnvSource {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
}

/** The key/value pairs of a ConfigMap or Secret (`data` of a Secret is base64). */
function pairsOf(object: Manifest): Record<string, string> {
  if (object.kind === 'ConfigMap') return { ...object.data };
  const decoded = Object.fromEntries(
    Object.entries(object.data ?? {}).map(([key, value]) => [
      key,
      Buffer.from(String(value), 'base64').toString('utf8'),
    ]),
  );
  return { ...decoded, ...object.stringData };
}

function find(manifests: Manifest[], kind: string, name: string): Manifest | undefined {
  return manifests.find((manifest) => manifest.kind === kind && manifest.metadata?.name === name);
}

/**
 * The variables the first container of a Deployment gets. `optionalSecrets: false` leaves out every value an
 * `optional: true` reference names (a first deployment that created only the required Secrets). A required
 * reference to a ConfigMap, Secret or key that no manifest holds throws: the kubelet would not start the pod.
 */
export function podEnvironment(
  deployment: Manifest,
  manifests: Manifest[],
  options: { optionalSecrets: boolean },
): Record<string, string> {
  const container = deployment.spec.template.spec.containers[0];
  const environment: Record<string, string> = {};
  const source = (kind: string, name: string, optional: boolean | undefined) => {
    const object = find(manifests, kind, name);
    if (!object && !optional) throw new Error(`${deployment.metadata.name}: no ${kind} ${name}`);
    if (!object || (optional && !options.optionalSecrets && kind === 'Secret')) return undefined;
    return pairsOf(object);
  };
  // envFrom first, in order (a later source wins), then env (which wins over envFrom).
  for (const from of (container.envFrom ?? []) as EnvSource[]) {
    const pairs = from.configMapRef
      ? source('ConfigMap', from.configMapRef.name, from.configMapRef.optional)
      : source('Secret', from.secretRef!.name, from.secretRef!.optional);
    for (const [key, value] of Object.entries(pairs ?? {})) environment[(from.prefix ?? '') + key] = value;
  }
  for (const variable of (container.env ?? []) as EnvVariable[]) {
    if (variable.value !== undefined) {
      environment[variable.name] = String(variable.value);
      continue;
    }
    const reference = variable.valueFrom?.secretKeyRef ?? variable.valueFrom?.configMapKeyRef;
    if (!reference) continue; // fieldRef, resourceFieldRef: not used by gw's manifests
    const kind = variable.valueFrom?.secretKeyRef ? 'Secret' : 'ConfigMap';
    const pairs = source(kind, reference.name, reference.optional);
    const value = pairs?.[reference.key];
    if (value === undefined && pairs && !reference.optional)
      throw new Error(
        `${deployment.metadata.name}: ${variable.name}: ${kind} ${reference.name} has no key ${reference.key}`,
      );
    if (value !== undefined) environment[variable.name] = value;
  }
  return environment;
}

/**
 * The names of the variables a manifest can set on a Deployment's first container: its `env`, every key of
 * the ConfigMaps and Secrets its `envFrom` names, and the `env` that overlays' JSON patches add to it.
 */
export function settableVariables(
  deployment: Manifest,
  manifests: Manifest[],
  overlayPatches: { labelSelector?: string; name?: string; operations: Manifest[] }[],
): Set<string> {
  const container = deployment.spec.template.spec.containers[0];
  const names = new Set<string>(((container.env ?? []) as EnvVariable[]).map((variable) => variable.name));
  for (const from of (container.envFrom ?? []) as EnvSource[]) {
    const object = from.configMapRef
      ? find(manifests, 'ConfigMap', from.configMapRef.name)
      : find(manifests, 'Secret', from.secretRef!.name);
    for (const key of Object.keys(object ? pairsOf(object) : {})) names.add((from.prefix ?? '') + key);
  }
  const labels: Record<string, string> = deployment.metadata.labels ?? {};
  for (const patch of overlayPatches) {
    const [key, value] = (patch.labelSelector ?? '').split('=');
    const targeted = patch.name
      ? patch.name === deployment.metadata.name
      : key !== undefined && labels[key] === value;
    if (!targeted) continue;
    for (const operation of patch.operations)
      if (operation.op === 'add' && operation.path === '/spec/template/spec/containers/0/env/-')
        names.add(operation.value.name);
  }
  return names;
}

// deploy/k8s is validated offline (no cluster can run here): every document against the Kubernetes schemas,
// and against gw itself (entry points exist, every service finds the others and Redis).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const ROOT = join(import.meta.dirname, '..', 'deploy', 'k8s');
const DIRECTORY = join(ROOT, 'base');
const KINDS: Record<string, new (value: never) => { validate(): void }> = {
  Deployment,
  Service,
  ConfigMap,
  Secret,
  Namespace,
  HorizontalPodAutoscaler,
  PodDisruptionBudget,
  NetworkPolicy,
  StatefulSet,
};

// biome-ignore lint/suspicious/noExplicitAny: manifests are plain YAML documents
type Manifest = any;

const manifests: Manifest[] = readdirSync(DIRECTORY)
  .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(DIRECTORY, file), 'utf8')).map((document) => document.toJS()),
  );

/** Documents of a folder's YAML files (kustomization files apart). */
function documentsOf(directory: string): Manifest[] {
  return readdirSync(directory)
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(directory, file), 'utf8')).map((document) => document.toJS()),
    );
}

const OVERLAYS = join(ROOT, 'overlays');

/** Custom resources the schemas above lack: the fields their controllers require, checked by hand. */
const CUSTOM_KINDS: Record<string, (manifest: Manifest) => void> = {
  ScaledObject: (manifest) => {
    expect(manifest.apiVersion).toBe('keda.sh/v1alpha1');
    expect(manifest.spec.scaleTargetRef.name).toBeTruthy();
    expect(manifest.spec.triggers.length).toBeGreaterThan(0);
  },
  ServiceMonitor: (manifest) => {
    expect(manifest.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(Object.keys(manifest.spec.selector.matchLabels).length).toBeGreaterThan(0);
    expect(manifest.spec.endpoints[0].port).toBeTruthy();
  },
};

/** Whether a label selector (matchLabels and `In` expressions) selects a set of labels. */
function selects(selector: Manifest, labels: Record<string, string>): boolean {
  const plain = Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const expressions = (selector?.matchExpressions ?? []).every(
    (expression: { key: string; operator: string; values: string[] }) =>
      expression.operator === 'In' && expression.values.includes(labels[expression.key] ?? ''),
  );
  return plain && expressions;
}

describe('deploy/k8s', () => {
  it('holds only valid documents of known kinds', () => {
    expect(manifests.length).toBeGreaterThan(10);
    for (const manifest of manifests) {
      const Model = KINDS[manifest.kind];
      expect(Model, `kind ${manifest.kind}`).toBeDefined();
      expect(
        () => new Model!(manifest as never).validate(),
        `${manifest.kind} ${manifest.metadata?.name}`,
      ).not.toThrow();
    }
  });

  it('runs every service of gw from an entry point that exists, with the addresses it needs', () => {
    const deployments = manifests.filter((manifest) => manifest.kind === 'Deployment');
    expect(deployments.map((deployment) => deployment.metadata.name).sort()).toEqual([
      'gw-admin',
      'gw-governance',
      'gw-ingress',
      'gw-mcp-runner',
      'gw-router',
    ]);
    const environment = manifests.find(
      (manifest) => manifest.kind === 'ConfigMap' && manifest.metadata.name === 'gw-env',
    ).data;
    for (const name of ['REDIS_URL', 'GW_ROUTER_ADDR', 'GW_GOVERNANCE_ADDR', 'GATEWAY_CONFIG'])
      expect(environment[name]).toBeTruthy();
    for (const deployment of deployments) {
      const container = deployment.spec.template.spec.containers[0];
      const entry = container.args[1] as string;
      expect(existsSync(join(import.meta.dirname, '..', entry)), entry).toBe(true);
      expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
        Number(environment.GW_SHUTDOWN_TIMEOUT_MS) / 1000,
      );
      const selector = deployment.spec.selector.matchLabels;
      expect(deployment.spec.template.metadata.labels).toMatchObject(selector);
    }
  });

  it('gives every Service pods to select', () => {
    const labels = manifests
      .filter((manifest) => manifest.kind === 'Deployment')
      .map((deployment) => deployment.spec.template.metadata.labels);
    for (const service of manifests.filter((manifest) => manifest.kind === 'Service')) {
      expect(
        labels.some((set) =>
          Object.entries(service.spec.selector).every(([key, value]) => set[key] === value),
        ),
        service.metadata.name,
      ).toBe(true);
    }
  });

  const kubectl = (() => {
    try {
      execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!kubectl)(
    'builds deploy/k8s and every overlay with kubectl kustomize (skipped where kubectl is not installed)',
    () => {
      // An overlay inside its base's folder is refused by kustomize (a cycle): hence base/ beside overlays/.
      for (const directory of [ROOT, ...readdirSync(OVERLAYS).map((overlay) => join(OVERLAYS, overlay))]) {
        const output = execFileSync('kubectl', ['kustomize', directory], { encoding: 'utf8' });
        expect(
          parseAllDocuments(output).map((document) => document.toJS().kind),
          directory,
        ).toContain('Deployment');
      }
    },
  );

  it('validates every overlay: its documents, and the base it builds on', () => {
    const overlays = readdirSync(OVERLAYS);
    expect(overlays.sort()).toEqual(['grpc-mtls', 'keda-mcp-runner', 'prometheus', 'redis-aof']);
    for (const overlay of overlays) {
      const kustomization = parseAllDocuments(
        readFileSync(join(OVERLAYS, overlay, 'kustomization.yaml'), 'utf8'),
      )[0]!.toJS();
      expect(kustomization.resources).toContain('../../base');
      for (const resource of kustomization.resources.filter((name: string) => name !== '../../base'))
        expect(existsSync(join(OVERLAYS, overlay, resource)), `${overlay}/${resource}`).toBe(true);
      for (const manifest of documentsOf(join(OVERLAYS, overlay))) {
        if (Array.isArray(manifest)) continue; // a JSON patch (grpc-mtls)
        const custom = CUSTOM_KINDS[manifest.kind];
        if (custom) {
          custom(manifest);
          continue;
        }
        const Model = KINDS[manifest.kind];
        expect(Model, `${overlay}: kind ${manifest.kind}`).toBeDefined();
        expect(() => new Model!(manifest as never).validate(), `${overlay}: ${manifest.kind}`).not.toThrow();
      }
    }
  });

  it('lets only the callers of each port reach it (NetworkPolicies)', () => {
    const policies = manifests.filter((manifest) => manifest.kind === 'NetworkPolicy');
    const pods = Object.fromEntries(
      manifests
        .filter((manifest) => manifest.kind === 'Deployment')
        .map((deployment) => [deployment.metadata.name, deployment.spec.template.metadata.labels]),
    ) as Record<string, Record<string, string>>;
    // Every pod is closed by default.
    expect(
      policies.some((policy) => Object.keys(policy.spec.podSelector).length === 0 && !policy.spec.ingress),
    ).toBe(true);
    /** The gw pods (by Deployment) allowed to reach a port of a pod; 'anyone' when the rule has no `from`. */
    const callers = (target: string, port: number) => {
      const allowed = new Set<string>();
      for (const policy of policies) {
        if (!selects(policy.spec.podSelector, pods[target]!) || !policy.spec.ingress) continue;
        for (const rule of policy.spec.ingress) {
          if (!(rule.ports ?? []).some((entry: { port: number }) => entry.port === port)) continue;
          if (!rule.from) allowed.add('anyone');
          for (const peer of rule.from ?? []) {
            if (peer.namespaceSelector) continue; // other namespaces: checked below
            for (const [name, labels] of Object.entries(pods))
              if (selects(peer.podSelector, labels)) allowed.add(name);
          }
        }
      }
      return [...allowed].sort();
    };
    expect(callers('gw-ingress', 8080)).toEqual(['anyone']);
    expect(callers('gw-router', 7101)).toEqual(['gw-admin', 'gw-ingress']);
    expect(callers('gw-governance', 7201)).toEqual(['gw-admin', 'gw-ingress']);
    expect(callers('gw-admin', 8081)).toEqual([]);
    expect(callers('gw-mcp-runner', 9301)).toEqual([]);
    // Redis: gw's five services only.
    const redis = { 'app.kubernetes.io/name': 'redis' };
    const redisPeers = policies
      .filter((policy) => selects(policy.spec.podSelector, redis))
      .flatMap((policy) => (policy.spec.ingress ?? []).flatMap((rule: Manifest) => rule.from ?? []));
    expect(
      Object.keys(pods).filter((name) => redisPeers.some((peer) => selects(peer.podSelector, pods[name]!))),
    ).toEqual(Object.keys(pods));
  });

  it('gives every gRPC caller and server the cluster token from its Secret', () => {
    for (const name of ['gw-ingress', 'gw-router', 'gw-governance', 'gw-admin']) {
      const deployment = manifests.find(
        (manifest) => manifest.kind === 'Deployment' && manifest.metadata.name === name,
      );
      const token = deployment.spec.template.spec.containers[0].env.find(
        (variable: { name: string }) => variable.name === 'GW_CLUSTER_TOKEN',
      );
      expect(token?.valueFrom?.secretKeyRef, name).toEqual({ name: 'gw-cluster-token', key: 'token' });
    }
  });

  it('lists every base file in kustomization.yaml', () => {
    const kustomization = parseAllDocuments(
      readFileSync(join(DIRECTORY, 'kustomization.yaml'), 'utf8'),
    )[0]!.toJS();
    const files = readdirSync(DIRECTORY).filter(
      (file) => file.endsWith('.yaml') && file !== 'kustomization.yaml',
    );
    expect([...kustomization.resources].sort()).toEqual(files.sort());
  });
});

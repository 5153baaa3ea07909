// deploy/k8s is validated offline (no cluster can run here): every document against the Kubernetes schemas,
// and against gw itself (entry points exist, every service finds the others and Redis).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const DIRECTORY = join(import.meta.dirname, '..', 'deploy', 'k8s');
const KINDS: Record<string, new (value: never) => { validate(): void }> = {
  Deployment,
  Service,
  ConfigMap,
  Secret,
  Namespace,
  HorizontalPodAutoscaler,
  PodDisruptionBudget,
};

// biome-ignore lint/suspicious/noExplicitAny: manifests are plain YAML documents
type Manifest = any;

const manifests: Manifest[] = readdirSync(DIRECTORY)
  .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(DIRECTORY, file), 'utf8')).map((document) => document.toJS()),
  );

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
  it.skipIf(!kubectl)('builds with kubectl kustomize (skipped where kubectl is not installed)', () => {
    const output = execFileSync('kubectl', ['kustomize', DIRECTORY], { encoding: 'utf8' });
    expect(parseAllDocuments(output).map((document) => document.toJS().kind)).toContain('Deployment');
  });
});

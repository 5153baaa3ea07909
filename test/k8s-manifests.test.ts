// deploy/k8s is validated offline (no cluster can run here): every document against the Kubernetes schemas,
// and against gw itself (entry points exist, every service finds the others and Redis, every variable a
// service reads can be set, each pod's environment passes its service's schema, request logs and the audit
// log are on).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  adminEnvironmentSchema,
  governanceEnvironmentSchema,
  ingressEnvironmentSchema,
  mcpRunnerEnvironmentSchema,
  parseGatewayConfig,
  routerEnvironmentSchema,
} from '@gw/shared';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { podEnvironment, settableVariables } from './k8s-pod-environment.ts';

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

/** Documents of a folder's YAML files (kustomization files apart), or of one of them. */
function documentsOf(directory: string, only?: string): Manifest[] {
  return readdirSync(directory)
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml' && (!only || file === only))
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
      // Room for the drain delay (ingress and admin keep serving, not ready) and the drain after it.
      expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
        (Number(environment.GW_SHUTDOWN_TIMEOUT_MS) + Number(environment.GW_DRAIN_DELAY_MS)) / 1000,
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
    expect(overlays.sort()).toEqual(['grpc-mtls', 'keda-mcp-runner', 'postgres', 'prometheus', 'redis-aof']);
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
    // PostgreSQL (request logs, audit log): the admin only, where the log worker and the audit log run.
    const postgres = { 'app.kubernetes.io/name': 'postgres' };
    const postgresRules = policies
      .filter((policy) => selects(policy.spec.podSelector, postgres))
      .flatMap((policy) => policy.spec.ingress ?? []);
    expect(postgresRules.length).toBeGreaterThan(0);
    for (const rule of postgresRules) {
      expect(rule.from, 'a PostgreSQL rule without `from` lets anyone in').toBeDefined();
      expect(rule.ports.map((entry: { port: number }) => entry.port)).toEqual([5432]);
    }
    expect(
      Object.keys(pods).filter((name) =>
        postgresRules.some((rule: Manifest) =>
          rule.from.some(
            (peer: Manifest) => !peer.namespaceSelector && selects(peer.podSelector, pods[name]!),
          ),
        ),
      ),
    ).toEqual(['gw-admin']);
    expect(
      postgresRules.some((rule: Manifest) => rule.from.some((peer: Manifest) => peer.namespaceSelector)),
    ).toBe(false);
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

  it('lists every base file in kustomization.yaml but the Secret templates', () => {
    const kustomization = parseAllDocuments(
      readFileSync(join(DIRECTORY, 'kustomization.yaml'), 'utf8'),
    )[0]!.toJS();
    const files = readdirSync(DIRECTORY).filter(
      (file) => file.endsWith('.yaml') && file !== 'kustomization.yaml',
    );
    // Templates are never applied by kustomize: an apply would overwrite the Secrets created with real values.
    expect([...kustomization.resources].sort()).toEqual(
      files.filter((file) => !file.endsWith('.template.yaml')).sort(),
    );
    const templates = readdirSync(DIRECTORY).filter((file) => file.endsWith('.template.yaml'));
    expect(templates).toEqual(['secrets.template.yaml']);
    expect(
      new Set(
        documentsOf(DIRECTORY)
          .filter((m) => m.kind === 'Secret')
          .map((m) => m.metadata.name),
      ),
    ).toEqual(
      new Set(['gw-secrets', 'gw-cluster-token', 'gw-admin', 'gw-logs-database', 'gw-metrics-token']),
    );
    // No Secret is applied by the base: each one comes from its template.
    const applied = kustomization.resources.flatMap((file: string) => documentsOf(DIRECTORY, file));
    expect(applied.filter((manifest: Manifest) => manifest.kind === 'Secret')).toEqual([]);
  });
});

/** Each Deployment and the schema of the variables its service reads (packages/shared/src/config/environment.ts). */
const SCHEMAS = {
  'gw-ingress': ingressEnvironmentSchema,
  'gw-router': routerEnvironmentSchema,
  'gw-governance': governanceEnvironmentSchema,
  'gw-admin': adminEnvironmentSchema,
  'gw-mcp-runner': mcpRunnerEnvironmentSchema,
} as const;

/**
 * Variables a service reads that no manifest may set, and why. The launcher's schema
 * (clusterEnvironmentSchema: GW_<SERVICE>_REPLICAS, the ports it lays out) and the embedded gateway's are not
 * checked at all: neither runs in Kubernetes, where Deployments and autoscalers say how many pods run.
 */
const NOT_SET_IN_KUBERNETES: Record<string, string> = {
  // The directory of the MemoryStore a router or governance without REDIS_URL keeps: every pod here has Redis
  // (gw-env), and the root filesystem is read-only.
  GATEWAY_DATA_DIR: 'the store of a process without Redis',
};

/** The JSON patches of the overlays and the Deployments they target (grpc-mtls adds the TLS variables). */
const overlayPatches = readdirSync(OVERLAYS).flatMap((overlay) => {
  const kustomization = parseYaml(readFileSync(join(OVERLAYS, overlay, 'kustomization.yaml'), 'utf8'));
  return (kustomization.patches ?? []).flatMap(
    (patch: { path: string; target?: { labelSelector?: string; name?: string } }) => {
      const operations = parseYaml(readFileSync(join(OVERLAYS, overlay, patch.path), 'utf8'));
      if (!Array.isArray(operations)) return []; // a strategic merge patch: none sets variables today
      return [{ labelSelector: patch.target?.labelSelector, name: patch.target?.name, operations }];
    },
  );
});

const deploymentNamed = (name: string): Manifest =>
  manifests.find((manifest) => manifest.kind === 'Deployment' && manifest.metadata.name === name);

const containerEnv = (name: string): { name: string; value?: string; valueFrom?: Manifest }[] =>
  deploymentNamed(name).spec.template.spec.containers[0].env ?? [];

const gatewayConfigText = (): string =>
  manifests.find((manifest) => manifest.kind === 'ConfigMap' && manifest.metadata.name === 'gw-config').data[
    'gateway.yaml'
  ];

describe('deploy/k8s: what each pod is given', () => {
  it('can set every variable each service reads (its zod schema), but the few listed as not for Kubernetes', () => {
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      const settable = settableVariables(deploymentNamed(name), manifests, overlayPatches);
      const unsettable = Object.keys(schema.shape).filter(
        (variable) => !settable.has(variable) && !(variable in NOT_SET_IN_KUBERNETES),
      );
      expect(unsettable, `${name} reads variables no manifest can set`).toEqual([]);
    }
    // The list stays honest: each entry is read by a service, and set by no manifest.
    for (const variable of Object.keys(NOT_SET_IN_KUBERNETES)) {
      expect(
        Object.values(SCHEMAS).some((schema) => variable in schema.shape),
        variable,
      ).toBe(true);
      for (const name of Object.keys(SCHEMAS))
        expect(settableVariables(deploymentNamed(name), manifests, overlayPatches).has(variable)).toBe(false);
    }
  });

  it('gives each pod an environment and a config file its service accepts, with or without the optional Secrets', () => {
    for (const optionalSecrets of [false, true]) {
      for (const [name, schema] of Object.entries(SCHEMAS)) {
        const environment = podEnvironment(deploymentNamed(name), manifests, { optionalSecrets });
        const result = schema.safeParse(environment);
        expect(result.success, `${name}: ${JSON.stringify(result.error?.issues)}`).toBe(true);
        expect(() => parseGatewayConfig(parseYaml(gatewayConfigText()), environment), name).not.toThrow();
        // GATEWAY_CONFIG names the file gw-config mounts.
        const spec = deploymentNamed(name).spec.template.spec;
        const volume = spec.volumes.find((entry: Manifest) => entry.configMap?.name === 'gw-config');
        const mount = spec.containers[0].volumeMounts.find((entry: Manifest) => entry.name === volume.name);
        expect(environment.GATEWAY_CONFIG, name).toBe(`${mount.mountPath}/gateway.yaml`);
      }
    }
  });

  it('probes each pod for what the probe means (docs/kubernetes.md "Probes")', () => {
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      const container = deploymentNamed(name).spec.template.spec.containers[0];
      const environment = schema.parse(
        podEnvironment(deploymentNamed(name), manifests, { optionalSecrets: false }),
      );
      const portNamed = (port: string | number) =>
        typeof port === 'number'
          ? port
          : container.ports.find((entry: Manifest) => entry.name === port)?.containerPort;
      // The port that serves /health/live and /health/ready: the ingress's own, the metrics port of the others.
      const ports = environment as { PORT?: number; GW_METRICS_PORT?: number };
      const probesPort = name === 'gw-ingress' ? ports.PORT : ports.GW_METRICS_PORT;
      const { startupProbe, readinessProbe, livenessProbe } = container;
      // Liveness only asks whether the process is wedged: a dependency down never restarts a pod.
      for (const probe of [startupProbe, livenessProbe]) {
        expect(probe.httpGet.path, name).toBe('/health/live');
        expect(portNamed(probe.httpGet.port), name).toBe(probesPort);
      }
      // Start-up is given as long as it tries Redis, PostgreSQL and peers again (GW_STARTUP_RETRY_MS), and more.
      expect(startupProbe.periodSeconds * startupProbe.failureThreshold * 1000, name).toBeGreaterThan(
        environment.GW_STARTUP_RETRY_MS,
      );
      // Readiness: /health/ready, or the gRPC health the servers answer the same way (router, governance).
      if (readinessProbe.grpc) {
        expect(['gw-router', 'gw-governance'], name).toContain(name);
        expect(readinessProbe.grpc.port, name).toBe(portNamed('main'));
      } else {
        expect(readinessProbe.httpGet.path, name).toBe('/health/ready');
        expect(portNamed(readinessProbe.httpGet.port), name).toBe(probesPort);
      }
    }
  });

  it('makes optional only the Secrets a service starts without, and documents each in a template', () => {
    const templates = documentsOf(DIRECTORY, 'secrets.template.yaml');
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      for (const variable of containerEnv(name)) {
        const reference = variable.valueFrom?.secretKeyRef;
        if (!reference) continue;
        const template = templates.find((secret) => secret.metadata.name === reference.name);
        expect(template?.stringData?.[reference.key], `${name} ${variable.name}: template`).toBeDefined();
        const shape = (schema.shape as Record<string, { safeParse(value: unknown): { success: boolean } }>)[
          variable.name
        ];
        expect(shape, `${name} does not read ${variable.name}`).toBeDefined();
        if (reference.optional)
          expect(shape!.safeParse(undefined).success, `${name} ${variable.name}`).toBe(true);
      }
    }
    // The admin's credentials reach the admin only.
    for (const name of Object.keys(SCHEMAS).filter((service) => service !== 'gw-admin'))
      expect(
        JSON.stringify(deploymentNamed(name).spec.template.spec.containers[0]),
        `${name} gets the admin's credentials`,
      ).not.toContain('"gw-admin"');
  });

  it('turns request logs and the audit log on: PostgreSQL for the log worker in the admin, the stream on', () => {
    // docs/logs.md puts the log worker (and docs/admin-access.md the audit log) in the admin process.
    const docs = readFileSync(join(import.meta.dirname, '..', 'docs', 'logs.md'), 'utf8');
    expect(docs).toContain('written by the log worker (`RedisLogConsumer`) in the admin process');
    const adminMain = readFileSync(join(import.meta.dirname, '..', 'services/admin/src/main.ts'), 'utf8');
    expect(adminMain).toContain('startLogWorker(');
    expect(adminMain).toContain('PostgresAuditStore.open(');
    // The admin gets the database's URL from a Secret, not optionally: without it neither log exists.
    const url = containerEnv('gw-admin').find((variable) => variable.name === 'GW_LOGS_DATABASE_URL');
    expect(url?.valueFrom?.secretKeyRef).toEqual({ name: 'gw-logs-database', key: 'url' });
    // No other pod has it (none reads it).
    for (const name of Object.keys(SCHEMAS).filter((service) => service !== 'gw-admin')) {
      expect(containerEnv(name).map((variable) => variable.name)).not.toContain('GW_LOGS_DATABASE_URL');
      expect(Object.keys(SCHEMAS[name as keyof typeof SCHEMAS].shape)).not.toContain('GW_LOGS_DATABASE_URL');
    }
    // As the pods read them: the admin opens the database and reads the stream, the ingresses write it.
    const environments = Object.fromEntries(
      Object.keys(SCHEMAS).map((name) => [
        name,
        podEnvironment(deploymentNamed(name), manifests, { optionalSecrets: false }),
      ]),
    );
    for (const [name, environment] of Object.entries(environments))
      expect(environment.GW_LOGS_STREAM, `${name}: GW_LOGS_STREAM`).not.toBe('off');
    const admin = adminEnvironmentSchema.parse(environments['gw-admin']);
    expect(admin.GW_LOGS_DATABASE_URL).toMatch(/^postgres(ql)?:\/\//);
    expect(admin.GW_LOGS_STREAM).toBe('on');
    expect(admin.REDIS_URL).toBeTruthy(); // the stream, and audit.on_store_failure: queue
    expect(ingressEnvironmentSchema.parse(environments['gw-ingress']).GW_LOGS_STREAM).toBe('on');
    // The config file leaves request logs on.
    const config = parseGatewayConfig(parseYaml(gatewayConfigText()), environments['gw-admin']);
    expect(config.logs.enabled).toBe(true);
  });

  it('runs a PostgreSQL for trials in the postgres overlay, on the password the admin connects with', () => {
    const directory = join(OVERLAYS, 'postgres');
    const kustomization = parseYaml(readFileSync(join(directory, 'kustomization.yaml'), 'utf8'));
    expect(kustomization.resources).not.toContain('secret.template.yaml');
    const documents = documentsOf(directory);
    const statefulSet = documents.find((manifest) => manifest.kind === 'StatefulSet');
    const service = documents.find((manifest) => manifest.kind === 'Service');
    const secret = documents.find((manifest) => manifest.kind === 'Secret');
    // Labelled as the base's NetworkPolicy gw-postgres-clients expects: the admin alone reaches it.
    expect(statefulSet.spec.template.metadata.labels['app.kubernetes.io/name']).toBe('postgres');
    expect(selects({ matchLabels: service.spec.selector }, statefulSet.spec.template.metadata.labels)).toBe(
      true,
    );
    const container = statefulSet.spec.template.spec.containers[0];
    const variable = (name: string) => container.env.find((entry: Manifest) => entry.name === name);
    expect(variable('POSTGRES_PASSWORD').valueFrom.secretKeyRef).toEqual({
      name: 'gw-logs-database',
      key: 'password',
    });
    // Its data on the claim's volume.
    const claim = statefulSet.spec.volumeClaimTemplates[0].metadata.name;
    const mount = container.volumeMounts.find((entry: Manifest) => entry.name === claim);
    expect(variable('PGDATA').value.startsWith(`${mount.mountPath}/`)).toBe(true);
    // The template's URL is that server, user, database and password.
    expect(secret.metadata.name).toBe('gw-logs-database');
    const url = new URL(secret.stringData.url);
    expect(url.hostname).toBe(`${service.metadata.name}.gw.svc.cluster.local`);
    expect(Number(url.port)).toBe(service.spec.ports[0].port);
    expect(url.username).toBe(variable('POSTGRES_USER').value);
    expect(url.pathname).toBe(`/${variable('POSTGRES_DB').value}`);
    expect(url.password).toBe(secret.stringData.password);
  });
});

describe('docs/kubernetes.md', () => {
  it('names only metrics gw has (packages/shared/src/metrics.ts, or Node process metrics)', () => {
    const docs = readFileSync(join(import.meta.dirname, '..', 'docs', 'kubernetes.md'), 'utf8');
    const source = readFileSync(join(import.meta.dirname, '..', 'packages/shared/src/metrics.ts'), 'utf8');
    const named = [...new Set(docs.match(/\bgw_[a-z0-9_]+[a-z0-9]\b/g) ?? [])].filter(
      (name) => name !== 'gw_session', // a cookie, not a metric
    );
    expect(named.length).toBeGreaterThan(10);
    const unknown = named.filter(
      (name) => !source.includes(`'${name}'`) && !/^gw_(process|nodejs)_/.test(name),
    );
    expect(unknown).toEqual([]);
  });
});

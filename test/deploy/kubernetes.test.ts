/**
 * deploy/kubernetes (issue 43 item 6) rendered as an operator applies it: a copy of the folder
 * with secret.env made from secret.env.example, through `kubectl kustomize` (Debian's kubectl,
 * test/setup.sh), its YAML documents read with `yaml`. The rendered objects are checked against
 * the bot's own configuration: the ConfigMap's and the Secret's variables, given to loadConfig
 * (src/config.ts) as the pod's environment, are a valid configuration; the probes' path is
 * server.ts's health route on the port HTTP_PORT names; the Slack Service reaches SLACK_PORT;
 * the grace period outlasts the bot's stop; the PDB and the Services select the right pods;
 * STORE_URL names the Redis Service.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ENV_VARIABLES, loadConfig } from '../../src/config.ts';
import { STOPPED_WRITES_MS } from '../../src/core/running.ts';
import { STORE_DEADLINE_MS } from '../../src/core/state/deadline.ts';
import { HEALTH_PATH } from '../../src/ops/server.ts';

const BASE = resolve(import.meta.dirname, '../../deploy/kubernetes');

type Labels = Record<string, string>;
interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  env?: Array<{ name: string }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
}
interface K8sObject {
  kind: string;
  metadata: { name: string; labels?: Labels };
  data?: Record<string, string>;
  spec?: {
    selector?: Labels | { matchLabels: Labels };
    ports?: Array<{ name?: string; port: number; targetPort: string | number }>;
    template?: {
      metadata: { labels: Labels };
      spec: { terminationGracePeriodSeconds?: number; containers: Container[] };
    };
  };
}

let objects: K8sObject[];
let dir: string;

/** Debian's binary, else the one on PATH. */
const kubectl = existsSync('/usr/bin/kubectl') ? '/usr/bin/kubectl' : 'kubectl';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'genbot-kustomize-'));
  cpSync(BASE, dir, { recursive: true });
  writeFileSync(join(dir, 'secret.env'), readFileSync(join(BASE, 'secret.env.example')));
  const { stdout } = await promisify(execFile)(kubectl, ['kustomize', dir]);
  objects = parseAllDocuments(stdout).map((d) => d.toJS() as K8sObject);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function one(kind: string, name: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0]!;
}

/** Whether `selector` selects pods labelled `labels`. */
const selects = (selector: Labels, labels: Labels) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/** A port of a container by name or number. */
function containerPort(container: Container, port: string | number): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

/** The bot's Deployment, its pod's labels and its container. */
function bot() {
  const deployment = one('Deployment', 'genbot');
  const template = deployment.spec!.template!;
  expect(template.spec.containers).toHaveLength(1);
  return { deployment, labels: template.metadata.labels, pod: template.spec, container: template.spec.containers[0]! };
}

/** The ConfigMap and the Secret the bot's container takes its environment from (kustomize's generated names). */
function environment() {
  const { container } = bot();
  const configMaps = (container.envFrom ?? []).flatMap((e) =>
    e.configMapRef ? [one('ConfigMap', e.configMapRef.name)] : [],
  );
  const secrets = (container.envFrom ?? []).flatMap((e) => (e.secretRef ? [one('Secret', e.secretRef.name)] : []));
  expect(configMaps).toHaveLength(1);
  expect(secrets).toHaveLength(1);
  const config = configMaps[0]!.data ?? {};
  const secret = Object.keys(secrets[0]!.data ?? {});
  return { config, secret };
}

/**
 * The bot's configuration in the pod: the ConfigMap's variables (the Discord application id
 * filled in, as an operator does), and the Secret's each with a value of its own (the example
 * leaves them empty), Slack in HTTP mode.
 */
function podConfig() {
  const { config: data, secret } = environment();
  expect(data.DISCORD_APPLICATION_ID).toBe('');
  const config = { ...data, DISCORD_APPLICATION_ID: '1290000000000000001' };
  const values: Record<string, string> = {
    SERVICE_API_KEY: 'sk-kustomize-test-key',
    DISCORD_TOKEN: 'discord-kustomize-test-token',
    SLACK_BOT_TOKEN: 'xoxb-kustomize-test-token',
    SLACK_SIGNING_SECRET: 'kustomize-test-signing-secret',
  };
  const env = { ...config, ...Object.fromEntries(secret.map((name) => [name, values[name] ?? ''])) };
  return { env, values, parsed: loadConfig(env) };
}

describe('deploy/kubernetes rendered by kubectl kustomize', () => {
  it('holds the bot Deployment, the Slack Service, the PDB, Redis (StatefulSet and Service), a ConfigMap and a Secret', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '')}`).sort()).toEqual(
      [
        'ConfigMap/genbot-config',
        'Deployment/genbot',
        'PodDisruptionBudget/genbot',
        'Secret/genbot-secrets',
        'Service/genbot-redis',
        'Service/genbot-slack',
        'StatefulSet/genbot-redis',
      ].sort(),
    );
  });

  it('every variable the manifests set is one the configuration schema knows, and together they are a valid configuration', () => {
    const { container } = bot();
    const { config, secret } = environment();
    const names = [...Object.keys(config), ...secret, ...(container.env ?? []).map((e) => e.name)];
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) expect(ENV_VARIABLES, name).toContain(name);
    const { parsed } = podConfig();
    expect(parsed.slack).toBeDefined();
    expect(parsed.discord).toBeDefined();
  });

  it('the secret variables come from the Secret: every value the bot treats as secret is there, and none of the ConfigMap', () => {
    const { config, secret } = environment();
    const { parsed, values } = podConfig();
    expect(secret.sort()).toEqual(Object.keys(values).concat('SLACK_APP_TOKEN').sort());
    expect(parsed.secrets.sort()).toEqual(Object.values(values).sort());
    for (const value of Object.values(config)) expect(parsed.secrets).not.toContain(value);
    // No secret value is committed: the example's variables are all empty.
    const example = readFileSync(join(BASE, 'secret.env.example'), 'utf8');
    for (const line of example.split('\n').filter((l) => l && !l.startsWith('#'))) expect(line).toMatch(/^[A-Z_]+=$/);
  });

  it("the probes ask the bot's health route on HTTP_PORT; the Slack Service reaches SLACK_PORT on the bot's pods", () => {
    const { container, labels } = bot();
    const { parsed } = podConfig();
    expect(parsed.httpPort).toBeGreaterThan(0);
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'] as const) {
      const get = container[probe]?.httpGet;
      expect(get?.path, probe).toBe(HEALTH_PATH);
      expect(containerPort(container, get!.port), probe).toBe(parsed.httpPort);
    }
    const service = one('Service', 'genbot-slack');
    expect(selects(service.spec!.selector as Labels, labels)).toBe(true);
    expect(service.spec!.ports).toHaveLength(1);
    expect(containerPort(container, service.spec!.ports![0]!.targetPort)).toBe(parsed.slack!.port);
  });

  it("the grace period outlasts the preStop pause, SHUTDOWN_GRACE_MS, the stopped answers' last writes and the store's last call", () => {
    const { pod, container } = bot();
    const { parsed } = podConfig();
    const preStop = container.lifecycle?.preStop;
    const pauseMs =
      1000 * (preStop?.sleep?.seconds ?? (preStop?.exec?.command[0] === 'sleep' ? Number(preStop.exec.command[1]) : 0));
    expect(pauseMs).toBeGreaterThan(0);
    const stopMs = pauseMs + parsed.shutdownGraceMs + STOPPED_WRITES_MS + STORE_DEADLINE_MS;
    expect(pod.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(stopMs);
  });

  it("the PDB selects the bot's pods and not Redis'; STORE_URL names the Redis Service, which selects Redis' pods", () => {
    const { deployment, labels } = bot();
    const redis = one('StatefulSet', 'genbot-redis');
    const redisLabels = redis.spec!.template!.metadata.labels;
    const pdb = one('PodDisruptionBudget', 'genbot');
    const pdbSelector = (pdb.spec!.selector as { matchLabels: Labels }).matchLabels;
    expect(selects(pdbSelector, labels)).toBe(true);
    expect(selects(pdbSelector, redisLabels)).toBe(false);
    expect(selects((deployment.spec!.selector as { matchLabels: Labels }).matchLabels, redisLabels)).toBe(false);

    const store = new URL(podConfig().parsed.storeUrl);
    expect(store.protocol).toBe('redis:');
    const service = one('Service', store.hostname);
    expect(selects(service.spec!.selector as Labels, redisLabels)).toBe(true);
    const port = service.spec!.ports!.find((p) => p.port === Number(store.port || 6379));
    expect(port).toBeDefined();
    expect(containerPort(redis.spec!.template!.spec.containers[0]!, port!.targetPort)).toBe(6379);
  });
});

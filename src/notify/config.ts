/**
 * The notifications file (`teamkeys serve --notifications FILE`, kept in Git beside the manifests):
 * receivers and routes, checked against schemas/notifications.schema.json and then for what a
 * schema cannot say (unique names, a route's receiver declared, its secret present in the
 * environment). Every problem is reported at its `file:line:col`, and any problem stops the server
 * from starting: a route lost to a typo would silence the very messages it was written for.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { readSchemaFile } from '../api/schema/files.js';
import { formatError, parseManifests, type ManifestError } from '../gitops/source/manifests.js';

export const notificationsApiVersion = 'notifications.management.service/v1';

/** What the notifier reports, by the name routes and payloads use. */
export const notificationEvents = ['KeyExpiring', 'KeyUnused', 'KeyDisabled', 'KeyLeaked', 'RotationFailed', 'DeliveryFailed'] as const;
export type NotificationEvent = (typeof notificationEvents)[number];

/** Where messages go. Secrets (the HMAC key, a Slack URL) come from the server's environment, never from Git. */
export type Receiver =
  | { name: string; kind: 'webhook'; url: string; secret: string }
  | { name: string; kind: 'slack'; url: string }
  | { name: string; kind: 'github'; apiUrl: string; repository: string; token: string };

/** Each list narrows (absent: any); every route that matches an event sends it to its receiver. */
export interface Route {
  receiver: string;
  events?: NotificationEvent[];
  teams?: string[];
  owners?: string[];
  keys?: string[];
}

export interface NotificationConfig {
  receivers: Receiver[];
  routes: Route[];
}

/** The file cannot be used: every problem, one `file:line:col: message` a line. */
export class NotificationConfigError extends Error {}

let validator: ReturnType<Ajv['compile']> | undefined;
function validate(value: unknown): ErrorObject[] {
  validator ??= new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(readSchemaFile('notifications.schema.json')) as object);
  return validator(value) ? [] : (validator.errors ?? []);
}

/** `/spec/routes/0/events/1` -> `spec.routes[0].events[1]`. */
const fieldOf = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, s) => (/^\d+$/.test(s) ? `${path}[${s}]` : path ? `${path}.${s}` : s), '');

function schemaMessage(e: ErrorObject): { field: string; message: string } {
  const field = fieldOf(e.instancePath);
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'additionalProperties') return { field: field ? `${field}.${String(p.additionalProperty)}` : String(p.additionalProperty), message: `unknown field "${String(p.additionalProperty)}"` };
  if (e.keyword === 'required') return { field, message: `${field ? `${field}.` : ''}${String(p.missingProperty)} is required` };
  if (e.keyword === 'enum') return { field, message: `${field} must be one of ${(p.allowedValues as unknown[]).join(', ')}` };
  if (e.keyword === 'const') return { field, message: `${field} must be ${JSON.stringify(p.allowedValue)}` };
  return { field, message: `${field || 'the document'} ${e.message ?? 'is invalid'}` };
}

/** The config in `text` (from `file`), with secrets read from `env`; or every problem found. */
export function parseNotificationConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): { config?: NotificationConfig; errors: ManifestError[] } {
  const { manifests, errors } = parseManifests(text, file);
  if (errors.length) return { errors };
  if (manifests.length !== 1) return { errors: [{ file, line: 1, column: 1, message: `expected one Notifications document, found ${manifests.length}` }] };
  const m = manifests[0]!;
  const at = (field: string, message: string) => errors.push({ ...m.locate(field), message });
  for (const e of validate(m.object)) {
    const { field, message } = schemaMessage(e);
    at(field, message);
  }
  if (errors.length) return { errors: sorted(errors) };
  const spec = m.object.spec as { receivers: Record<string, unknown>[]; routes: Route[] };
  const receivers: Receiver[] = [];
  const names = new Set<string>();
  spec.receivers.forEach((r, i) => {
    const where = `spec.receivers[${i}]`;
    const name = r.name as string;
    if (names.has(name)) return at(`${where}.name`, `receiver "${name}" is declared twice`);
    names.add(name);
    const webhook = r.webhook as { url: string; secretEnv: string } | undefined;
    const slack = r.slack as { urlEnv: string } | undefined;
    const github = r.github as { repository: string; tokenEnv: string; apiUrl?: string } | undefined;
    if ([webhook, slack, github].filter(Boolean).length !== 1) return at(where, `receiver "${name}" needs exactly one of webhook, slack or github`);
    const fromEnv = (field: string, variable: string) => {
      const value = env[variable];
      if (!value) at(field, `environment variable ${variable} is not set (receiver "${name}" reads its secret from it)`);
      return value ?? '';
    };
    if (webhook) receivers.push({ name, kind: 'webhook', url: webhook.url, secret: fromEnv(`${where}.webhook.secretEnv`, webhook.secretEnv) });
    else if (github) {
      const apiUrl = (github.apiUrl ?? 'https://api.github.com').replace(/\/+$/, '');
      receivers.push({ name, kind: 'github', apiUrl, repository: github.repository, token: fromEnv(`${where}.github.tokenEnv`, github.tokenEnv) });
    } else {
      const url = fromEnv(`${where}.slack.urlEnv`, slack!.urlEnv);
      if (url && !/^https?:\/\//.test(url)) at(`${where}.slack.urlEnv`, `environment variable ${slack!.urlEnv} must hold an http(s) URL`);
      receivers.push({ name, kind: 'slack', url });
    }
  });
  spec.routes.forEach((r, i) => {
    if (!names.has(r.receiver)) at(`spec.routes[${i}].receiver`, `no receiver named "${r.receiver}" (declared: ${[...names].join(', ') || 'none'})`);
  });
  if (errors.length) return { errors: sorted(errors) };
  return { config: { receivers, routes: spec.routes }, errors: [] };
}

const sorted = (errors: ManifestError[]) => errors.sort((a, b) => a.line - b.line || a.column - b.column);

/** Reads and checks the file; throws NotificationConfigError listing every problem. */
export function loadNotificationConfig(path: string, env: NodeJS.ProcessEnv = process.env): NotificationConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new NotificationConfigError(`${path}: cannot read the notifications file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const { config, errors } = parseNotificationConfig(text, path, env);
  if (!config) throw new NotificationConfigError(errors.map(formatError).join('\n'));
  return config;
}

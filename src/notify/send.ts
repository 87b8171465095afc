/**
 * One delivery attempt to one receiver. A generic webhook gets JSON signed with HMAC-SHA256 of the
 * exact body under the receiver's secret (`X-Teamkeys-Signature: sha256=HEX`, as GitHub's
 * X-Hub-Signature-256), with the record's name in `X-Teamkeys-Delivery`: the same on every retry,
 * so a receiver that saw an attempt whose answer was lost can drop the repeat. A Slack receiver
 * gets `{text}`; a GitHub receiver opens an issue through the REST API with its token. Any 2xx is
 * delivered.
 */
import { createHmac } from 'node:crypto';
import type { Receiver } from './config.js';
import { eventOf, githubIssue, slackBody, webhookBody } from './messages.js';
import type { OutboxRecord } from './outbox.js';

export const signatureHeader = 'x-teamkeys-signature';
const timeoutMs = 10_000;

/** `sha256=HEX` of body under secret: what the receiver recomputes to check a message came from teamkeys. */
export const signatureOf = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** Sends the record; resolves when the receiver answered 2xx, throws with why not. */
export async function deliver(receiver: Receiver, record: OutboxRecord): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'teamkeys-notifications' };
  let body: string;
  let url: string;
  if (receiver.kind === 'webhook') {
    url = receiver.url;
    body = webhookBody(record.metadata.name, receiver.name, record.createdAt, record.message);
    headers[signatureHeader] = signatureOf(receiver.secret, body);
    headers['x-teamkeys-delivery'] = record.metadata.name;
    headers['x-teamkeys-event'] = eventOf(record.message);
  } else if (receiver.kind === 'github') {
    const issue = githubIssue(record.message, receiver.repository);
    url = `${receiver.apiUrl}/repos/${issue.repository}/issues`;
    body = issue.body;
    Object.assign(headers, { authorization: `Bearer ${receiver.token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' });
  } else {
    url = receiver.url;
    body = slackBody(record.message);
  }
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers, body, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    throw new Error(`could not reach the receiver: ${cause ?? (err instanceof Error ? err.message : String(err))}`);
  }
  await res.body?.cancel().catch(() => {});
  if (res.status < 200 || res.status > 299) throw new Error(`the receiver answered ${res.status}`);
}

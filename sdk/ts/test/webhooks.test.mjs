// Standard Webhooks verification: the specification's own test vector,
// and every way a delivery must be refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { signWebhook, verifyWebhook, WebhookVerificationError } from "../dist/index.js";

// The vector of the Standard Webhooks reference libraries' tests.
const vector = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const now = vector.timestamp * 1000;
const headers = (sig, ts = vector.timestamp, id = vector.id) =>
  new Headers({ "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": sig });

test("the reference vector verifies, and signWebhook signs it alike", async () => {
  assert.equal(await signWebhook(vector.secret, vector.id, vector.timestamp, vector.body), vector.signature);
  const ev = await verifyWebhook(vector.secret, headers(vector.signature), vector.body, { now });
  assert.equal(ev.id, vector.id);
  assert.equal(ev.raw, vector.body);
});

test("bytes and a Node-style header record verify too; one of two signatures (rotation) is enough", async () => {
  const body = new TextEncoder().encode(vector.body);
  const rec = { "Webhook-Id": vector.id, "webhook-timestamp": String(vector.timestamp), "webhook-signature": `v1,AAAA ${vector.signature}` };
  assert.equal((await verifyWebhook(vector.secret, rec, body, { now })).id, vector.id);
});

test("refused: a changed body, another secret, an old or future timestamp, missing headers, v2 only", async () => {
  const refuse = (p, re) => assert.rejects(p, (e) => e instanceof WebhookVerificationError && re.test(e.message));
  await refuse(verifyWebhook(vector.secret, headers(vector.signature), '{"test": 2432232315}', { now }), /does not verify/);
  await refuse(verifyWebhook("whsec_" + btoa("another secret"), headers(vector.signature), vector.body, { now }), /does not verify/);
  await refuse(verifyWebhook(vector.secret, headers(vector.signature), vector.body, { now: now + 6 * 60_000 }), /more than 300 s/);
  await refuse(verifyWebhook(vector.secret, headers(vector.signature), vector.body, { now: now - 6 * 60_000 }), /more than 300 s/);
  await refuse(verifyWebhook(vector.secret, new Headers({ "webhook-id": vector.id }), vector.body, { now }), /required/);
  await refuse(verifyWebhook(vector.secret, headers(vector.signature.replace("v1,", "v2,")), vector.body, { now }), /does not verify/);
  await refuse(verifyWebhook(vector.secret, headers(vector.signature, "12a"), vector.body, { now }), /Unix seconds/);
  await refuse(verifyWebhook("not base64!", headers(vector.signature), vector.body, { now }), /whsec_/);
});

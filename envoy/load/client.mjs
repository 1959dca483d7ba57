// Demo load: N keep-alive HTTP/1.1 clients at a steady rate as client `web`, no retries; prints a summary line
// every 5s (statuses, transport errors, responses carrying `Connection: close`). Env: TARGET RATE CLIENTS TAGS.
import http from "node:http";

const target = new URL(process.env.TARGET ?? "http://127.0.0.1:8080/");
const rate = Number(process.env.RATE ?? 5); // requests per second per client
const clients = Number(process.env.CLIENTS ?? 2);
const tags = process.env.TAGS ?? "&kuma.io/service=web&"; // trusted only with --trust-kuma-tags-header (demo)

const counts = { ok: 0, other: {}, errors: {}, connectionClose: 0 };

function once(agent) {
  return new Promise((resolve) => {
    const req = http.get(target, { agent, headers: { "x-kuma-tags": tags }, timeout: 10_000 }, (res) => {
      res.resume();
      res.on("end", () => {
        if (res.statusCode === 200) counts.ok++;
        else counts.other[res.statusCode] = (counts.other[res.statusCode] ?? 0) + 1;
        if (/close/i.test(res.headers.connection ?? "")) counts.connectionClose++;
        resolve();
      });
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err) => {
      counts.errors[err.code ?? err.message] = (counts.errors[err.code ?? err.message] ?? 0) + 1;
      resolve();
    });
  });
}

async function client() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (;;) {
    const started = Date.now();
    await once(agent);
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 / rate - (Date.now() - started))));
  }
}

setInterval(() => console.log(JSON.stringify({ msg: "load", target: target.href, ...counts })), 5000);
for (let i = 0; i < clients; i++) void client();

/**
 * The Helm chart's pod of the risk command (`kubectl exec … node risk.js halt`): what it renders,
 * its readiness command run with its rendered environment against a real Redis, and its command
 * run as the container runs it. The rendering is support/helm-render.ts, shared with the chart's
 * other tests.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { aclUserLine, redisRoleRule } from '@pmm/core';
import { privateRedis } from '@pmm/testkit';
import { podsOf } from '../support/chart-policies';
import { ROOT, byKind, named, render, rendered } from '../support/helm-render';
import { linkOperatorWorkdir, operatorProgram } from '../support/operator-image';

describe("the Helm chart's risk pod", () => {
  it("behavior: the risk command's pod: the operator image as the Redis user risk, under the signer's durability; it waits for kubectl exec and is Ready while risk.js status reads the halts", () => {
    const objects = rendered('production-sentinel-values.yaml');
    const deployment = named(objects, 'Deployment', '-risk')!;
    expect((deployment.spec as { replicas: number }).replicas).toBe(1);
    const pod = podsOf([deployment])[0]!;
    const c = pod.spec.containers[0]! as (typeof pod.spec.containers)[number] & { command: string[] };
    expect(c.image).toMatch(/pmm-operator@sha256:/);
    expect(c.ports ?? []).toEqual([]);
    expect(c.readinessProbe?.exec?.command).toEqual(['node', 'risk.js', 'status']);
    expect(c.env).toContainEqual({ name: 'REDIS_USERNAME', value: 'risk' });
    expect(c.env).toContainEqual({ name: 'REDIS_DURABILITY', value: 'replica' });
    expect(c.env).toContainEqual({ name: 'REDIS_DURABLE_REPLICAS', value: '2' });
    expect(pod.spec.volumes).toContainEqual(
      expect.objectContaining({
        secret: expect.objectContaining({
          items: expect.arrayContaining([{ key: 'risk-password', path: 'password' }]),
        }),
      }),
    );
    // risk.js is in the operator image's working folder (its WORKDIR), as `node risk.js` expects: a link
    // to the risk command's entry point.
    expect(operatorProgram('risk.js')).toBe('packages/operator/dist/risk/risk.js');
    expect(readFileSync(path.join(ROOT, 'packages', 'operator', 'src', 'risk', 'risk.ts'), 'utf8')).toContain(
      'runRiskCommand',
    );
    expect(
      byKind(render('minimal-values.yaml', '--set', 'risk.enabled=false'), 'Deployment').map((d) => d.metadata.name),
    ).not.toContainEqual(expect.stringMatching(/-risk$/));
  });

  it("behavior: the risk pod's readiness command (risk.js status, with the rendered environment) passes with the risk user's password and fails with another", async () => {
    const objects = rendered('minimal-values.yaml');
    const c = podsOf([named(objects, 'Deployment', '-risk')!])[0]!.spec.containers[0]!;
    const [command, ...args] = c.readinessProbe!.exec!.command;
    const password = 'risk-password-for-the-readiness-test';
    const server = await privateRedis({
      args: ['--user', ...aclUserLine('risk', password, redisRoleRule('risk')).split(' ').slice(1)],
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'helm-risk-'));
    try {
      // The operator image's working folder: its links to the built entry points (`npm run build`).
      const workdir = path.join(dir, 'workdir');
      mkdirSync(workdir);
      linkOperatorWorkdir(workdir);
      const probe = (secret: string) => {
        writeFileSync(path.join(dir, 'password'), `${secret}\n`);
        const env = Object.fromEntries(
          c.env!.map((e) => [
            e.name,
            e.name === 'REDIS_URL'
              ? server.url
              : e.name === 'REDIS_PASSWORD_FILE'
                ? path.join(dir, 'password')
                : e.value!,
          ]),
        );
        return spawnSync(command === 'node' ? process.execPath : command!, args, {
          cwd: workdir,
          env: { PATH: process.env.PATH, HOME: tmpdir(), ...env },
          encoding: 'utf8',
          timeout: 60_000,
        });
      };
      const ready = probe(password);
      expect([ready.status, ready.stderr]).toEqual([0, '']);
      expect(ready.stdout).toMatch(/^no halts: signing everywhere/);
      const wrong = probe('another-password');
      expect(wrong.status).not.toBe(0);
      expect(wrong.stderr).not.toContain('another-password');
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("behavior: the risk pod's command waits, and ends at once (exit 0) on SIGTERM", async () => {
    const objects = rendered('minimal-values.yaml');
    const c = podsOf([named(objects, 'Deployment', '-risk')!])[0]!.spec.containers[0]! as unknown as {
      command: string[];
    };
    const [shell, ...args] = c.command;
    const child = spawn(shell!, args, { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Still running after a moment: it waits.
    const early = await Promise.race([exited, new Promise((r) => setTimeout(() => r('running'), 500))]);
    expect(early).toBe('running');
    const sent = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - sent).toBeLessThan(5_000);
  });
});

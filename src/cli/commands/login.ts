/** `teamkeys login`, `teamkeys logout` and `teamkeys credential` (kubectl's exec plugin): signing in with SSO. */
import type { Command } from 'commander';

interface LoginFlags {
  server: string;
  caFile?: string;
  browser: boolean;
  device?: boolean;
  kubeconfig?: string;
}

export function registerLogin(program: Command): void {
  program
    .command('login')
    .description("sign in through the server's identity provider (SSO) and keep your own access key (a Login key) for kubectl")
    .requiredOption('--server <url>', 'the teamkeys server, e.g. https://teamkeys.example.com')
    .option('--ca-file <file>', "PEM certificate to trust for the server")
    .option('--no-browser', 'print the address to open instead of opening a browser')
    .option('--device', "sign in with the provider's device code (approve on another machine)")
    .option('--kubeconfig <file>', 'also write a kubeconfig user that runs teamkeys credential, and make it current')
    .action(async (f: LoginFlags) => {
      const { login } = await import('../login-flow.js');
      const signedIn = await login({ server: f.server, ...(f.caFile ? { caFile: f.caFile } : {}), noBrowser: !f.browser, device: f.device === true, out: process.stdout });
      if (f.kubeconfig) {
        const { writeExecKubeconfig } = await import('../kubeconfig-exec.js');
        const context = await writeExecKubeconfig(f.kubeconfig, signedIn.server, f.caFile);
        console.log(`Wrote context ${context} to ${f.kubeconfig} (kubectl runs teamkeys credential for the key).`);
      }
    });
  program
    .command('logout')
    .description('delete your Login key for the server on the server and from this machine')
    .requiredOption('--server <url>', 'the teamkeys server')
    .option('--ca-file <file>', 'PEM certificate to trust for the server')
    .action(async (f: { server: string; caFile?: string }) => {
      const { logout } = await import('../logout.js');
      console.log(await logout(f.server, f.caFile));
    });
  program
    .command('credential')
    .description('kubectl exec credential plugin: prints the cached Login key as an ExecCredential (signs in first when needed and interactive)')
    .requiredOption('--server <url>', 'the teamkeys server')
    .option('--ca-file <file>', 'PEM certificate to trust for the server')
    .action(async () => {
      // main.ts runs credential before commander loads; this is reached only through --help-like paths.
      const { runCredential } = await import('../credential.js');
      process.exitCode = await runCredential(process.argv.slice(3));
    });
}

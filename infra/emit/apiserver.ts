// The cluster-side half of mTLS: the kube-apiserver's --admission-control-config-file, whose
// webhook plugins name a kubeconfig, and that kubeconfig, whose user entry for the webhook host
// holds the client certificate the apiserver presents to it.

/**
 * The `users[].name` the apiserver looks up for a webhook URL. It looks up `host:port` as written
 * in the URL (port 443 when none), then, for port 443 only, the bare host (test/fixtures/apiserver/README.md,
 * k8s.io/apiserver/pkg/util/webhook/authentication.go). So: the bare host for 443, else host:port.
 */
export function kubeconfigUserName(webhookUrl: string): string {
  const url = new URL(webhookUrl);
  const port = url.port === '' ? '443' : url.port;
  if (port === '443') return url.hostname.replace(/^\[(.*)\]$/, '$1');
  return `${url.hostname}:${port}`;
}

/**
 * Where the apiserver reads the kubeconfig on a control-plane node: beside kubeadm's own files.
 * The AdmissionConfiguration names it by this path, so the file must be copied there.
 */
export const DEFAULT_KUBECONFIG_PATH = '/etc/kubernetes/admission/serverless-admission-kubeconfig.yaml';

export interface ClientIdentity {
  readonly certPem: string;
  readonly keyPem: string;
}

export function webhookKubeconfig(webhookUrl: string, client: ClientIdentity): Record<string, unknown> {
  const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Config',
    // Only users matter to the apiserver here; it picks one by the webhook's host.
    users: [
      {
        name: kubeconfigUserName(webhookUrl),
        user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) },
      },
    ],
  };
}

/** AdmissionConfiguration (apiserver.config.k8s.io/v1) pointing both webhook plugins at the kubeconfig. */
export function apiserverAdmissionConfiguration(kubeConfigFile: string): Record<string, unknown> {
  const webhookConfiguration = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'WebhookAdmissionConfiguration',
    kubeConfigFile,
  };
  return {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: [
      { name: 'ValidatingAdmissionWebhook', configuration: webhookConfiguration },
      { name: 'MutatingAdmissionWebhook', configuration: webhookConfiguration },
    ],
  };
}

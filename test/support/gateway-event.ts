// The smallest API Gateway REST event the handlers accept: what the bench, fuzz and handler
// suites send when they call a Lambda handler directly.
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/**
 * Lambda's longest budget (15 minutes): middy answers with a timeout when the remaining time runs
 * out, and a test measures what the handler answers, not how fast a busy machine runs it.
 */
export const lambdaContext = { getRemainingTimeInMillis: () => 900_000 } as unknown as Context;

export function gatewayEvent(
  path: string,
  body: string,
  subjectDN = 'CN=kube-apiserver-admission-client',
): APIGatewayProxyEvent {
  return {
    path,
    httpMethod: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    isBase64Encoded: false,
    // The name API Gateway says the caller reached: url-secret capabilities are bound to it.
    requestContext: { identity: { clientCert: { subjectDN } }, domainName: 'admission.test' },
  } as unknown as APIGatewayProxyEvent;
}

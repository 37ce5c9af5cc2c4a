// The smallest API Gateway REST event the handlers accept: what the bench, fuzz and handler
// suites send when they call a Lambda handler directly.
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

export const lambdaContext = { getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

export function gatewayEvent(path: string, body: string, subjectDN = 'CN=kube-apiserver-admission-client'): APIGatewayProxyEvent {
  return {
    path,
    httpMethod: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    isBase64Encoded: false,
    requestContext: { identity: { clientCert: { subjectDN } } },
  } as unknown as APIGatewayProxyEvent;
}

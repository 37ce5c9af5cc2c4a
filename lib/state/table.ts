// The one table of lib/state. Every record has a string partition key `pk` and sort key `sk`;
// ephemeral records carry `expiresAt` (epoch seconds), the table's TTL attribute. DynamoDB deletes
// expired items lazily (up to days later on AWS), so every reader also ignores them itself.
//
//   pk                         sk                            what
//   ns#<name>                  namespace                     a learned namespace (or a tombstone)
//   ns#                        listing                       a complete namespace listing was loaded (sync)
//   pod#<namespace>/<name>     placement                     a learned pod's uid and node (or a tombstone)
//   node#<name>                node                          a learned Node's uid (or a tombstone)
//   rq#<namespace>#queue       queue                         quota reservations in arrival order (quota-ledger.ts)
//   rq#<namespace>             decided#<request uid>          a queued reservation that wrote no charge of its own
//   rq#<namespace>             quota#<name>                  a learned ResourceQuota (spec.hard, scopes)
//   rq#<namespace>             charge#<resource>#<name>      what one object consumes; expiresAt while reserved
//   erl#<bucket key>           bucket                        an EventRateLimit token bucket; expiresAt = when full again
//   req#<plugin>#<uid>         done                          idempotency record of one request; expiresAt
//   cache#<plugin>#<key>       decision                      a cached backend decision; expiresAt = its TTL
//   obj#<kind>                 <name> or <namespace>/<name>  a learned StorageClass, PriorityClass, LimitRange...
//   reader#<kind>              checkpoint                    the cluster reader's resourceVersion and keys per kind
//   lease#cluster-reader       lease                         the deployed reader's lease (one watcher per cluster)
//
// The cluster reader writes ns#, rq#, pod#, node#, obj#, reader# and lease#cluster-reader, and
// nothing else.
export const TTL_ATTRIBUTE = 'expiresAt';

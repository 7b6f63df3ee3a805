import type { Api } from '../../common/ipc-contract.js';
import { splitChannel } from '../../common/ipc-contract.js';
import { isChannel, validateRequest } from '../../common/ipc-validators.js';
import { err, type Result } from '../../common/result.js';

type Handler = (payload: unknown) => Promise<Result<unknown>>;

/**
 * Validates one request from a UI transport and delegates it to the service; never throws, so a bad payload or a
 * service bug comes back as a Result naming the channel.
 */
export async function dispatchRequest(api: Api, channel: unknown, payload: unknown): Promise<Result<unknown>> {
  if (!isChannel(channel)) return err('BAD_INPUT', `unknown channel '${String(channel).slice(0, 80)}'`);
  const valid = validateRequest(channel, payload);
  if (!valid.ok) return valid;
  const { service, method } = splitChannel(channel);
  const target = api[service] as unknown as Record<string, Handler | undefined>;
  const fn = target[method];
  if (typeof fn !== 'function') return err('INTERNAL', `${channel}: the ${service} service does not implement ${method}`);
  try {
    const result = await fn.call(target, valid.value);
    if (typeof result !== 'object' || result === null || typeof result.ok !== 'boolean') {
      return err('INTERNAL', `${channel}: the service returned something that is not a Result`);
    }
    return result;
  } catch (e) {
    return err('INTERNAL', `${channel}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

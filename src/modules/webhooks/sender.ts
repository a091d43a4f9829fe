import type { Agent } from 'undici'
import { clock } from '../../lib/clock.js'
import { type AttemptOutcome, sendAttempt } from './attempt.js'
import type { DeliveryRow } from './delivery-repository.js'
import type { EndpointRow } from './repository.js'
import { signingSecrets } from './signature.js'
import { createSafeDispatcher } from './url-policy.js'

export interface SenderOptions {
  timeoutMs: number
  allowPrivateUrls: boolean
}

/**
 * Sends attempts of deliveries through one HTTP agent that checks every address it connects to, so
 * a host name that later resolves to a private address is refused too. The worker has one for its
 * schedule; the API has one for resends.
 */
export class DeliverySender {
  private readonly dispatcher: Agent

  constructor(private readonly options: SenderOptions) {
    this.dispatcher = createSafeDispatcher({
      allowPrivate: options.allowPrivateUrls,
      timeoutMs: options.timeoutMs,
    })
  }

  /** One POST of the delivery's event, signed with the endpoint's secrets of this moment. */
  send(delivery: DeliveryRow, endpoint: EndpointRow, payload: string): Promise<AttemptOutcome> {
    return sendAttempt(
      this.dispatcher,
      {
        url: endpoint.url,
        deliveryId: delivery.id,
        eventType: delivery.event_type,
        body: payload,
        secrets: signingSecrets(endpoint, clock.now()),
      },
      this.options.timeoutMs,
    )
  }

  /** Closes the agent's connections; call once, after the last send. */
  close(): Promise<void> {
    return this.dispatcher.close()
  }
}

import type http from 'node:http'
import net, { type Socket } from 'node:net'

/**
 * How long a kept-alive connection with no request in progress is left, once the listener has
 * closed, to send its next request (answered, and its connection closed with it). Past it the
 * connection is closed: a client that sends at that very moment is one that stayed silent this long,
 * as at the end of any keep-alive timeout.
 */
export const IDLE_CONNECTION_MS = 1000

/**
 * The API listener's connections, followed from the start, so that a shutdown loses no request.
 * Node's `server.close()` (which Fastify's `close()` calls) destroys at once every connection that
 * is not in a request: one whose client is writing its next request at that moment, or a new one
 * whose request has not arrived yet, is reset (ECONNRESET), and its client cannot know whether the
 * request was served. `drain()` instead stops accepting connections, answers the request in
 * progress and the next request of each connection with `Connection: close`, and closes only a
 * connection that stays silent for IDLE_CONNECTION_MS.
 */
export class ConnectionDrain {
  /** Each open connection, with its answer in progress (undefined between requests). */
  private readonly answers = new Map<Socket, http.ServerResponse | undefined>()
  private draining = false

  constructor(private readonly server: http.Server) {
    server.on('connection', (socket: Socket) => {
      this.answers.set(socket, undefined)
      socket.once('close', () => this.answers.delete(socket))
    })
    // Before Fastify's own listener, so that the header is set before any answer is written.
    server.prependListener('request', (request, response) => {
      const socket = request.socket
      this.answers.set(socket, response)
      // Node.js closes the connection once this answer is written.
      if (this.draining) response.setHeader('connection', 'close')
      response.once('close', () => {
        if (this.answers.get(socket) !== response) return
        this.answers.set(socket, undefined)
        // An answer begun before the drain may have kept its connection: treated as a silent one.
        if (this.draining) this.closeIfSilent(socket)
      })
    })
  }

  /**
   * Stops accepting connections; resolves once every open one has ended, each after its answer in
   * progress or its next request, or after IDLE_CONNECTION_MS of silence.
   */
  drain(): Promise<void> {
    this.draining = true
    // The listener alone: `http.Server.prototype.close` would destroy the idle connections too.
    const ended = new Promise<void>((resolve) =>
      net.Server.prototype.close.call(this.server, () => resolve()),
    )
    for (const [socket, answer] of this.answers) {
      if (answer === undefined) this.closeIfSilent(socket)
      else if (!answer.headersSent) answer.setHeader('connection', 'close')
    }
    return ended
  }

  private closeIfSilent(socket: Socket): void {
    const timer = setTimeout(() => {
      if (this.answers.get(socket) === undefined) socket.destroy()
    }, IDLE_CONNECTION_MS)
    socket.once('close', () => clearTimeout(timer))
  }
}

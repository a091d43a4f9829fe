import net from 'node:net'

/**
 * A TCP proxy on a loopback port to another (PostgreSQL's), byte for byte: a database that appears
 * later on the port a DATABASE_URL names (`listen` after the service started), or one that stops
 * answering without closing its connections (`freeze`), as a stopped server or a broken network does.
 */
export class TcpProxy {
  private readonly server: net.Server
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>()

  constructor(target: number) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(target, '127.0.0.1')
      const pair = { client, upstream }
      this.pairs.add(pair)
      client.pipe(upstream).pipe(client)
      const end = () => {
        this.pairs.delete(pair)
        client.destroy()
        upstream.destroy()
      }
      client.on('error', end).on('close', end)
      upstream.on('error', end).on('close', end)
    })
  }

  /** Starts passing connections to `port` on to the target. */
  listen(port = 0): Promise<number> {
    return new Promise((resolve) =>
      this.server.listen(port, '127.0.0.1', () => resolve((this.server.address() as net.AddressInfo).port)),
    )
  }

  /** From now on nothing a client sends reaches the target; the connections stay open. */
  freeze(): void {
    for (const { client, upstream } of this.pairs) client.unpipe(upstream)
    this.server.removeAllListeners('connection')
    this.server.on('connection', (socket: net.Socket) => socket.pause())
  }

  close(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy()
      upstream.destroy()
    }
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

/**
 * Group commit for the SQLite driver: the transactions that arrive together share one COMMIT
 * (4,000 creates took 4,103 COMMITs alone and 407 in groups, 0.876 → 0.590 ms of CPU a create:
 * docs/performance.md). Each runs in a savepoint of one real transaction, whose COMMIT waits for
 * the event loop's next turn; each is answered only after that COMMIT, and one that fails is rolled
 * back to its savepoint, leaving the others' work, and answered after it too.
 */

/** The savepoint each transaction of a group runs in. */
const MEMBER = 'group_commit_member'

/** Transactions sharing one real transaction: their COMMIT, and what each waits for. */
interface Group {
  members: number
  done: Promise<void>
  resolve: () => void
  reject: (error: unknown) => void
}

export interface GroupCommitStats {
  /** Real COMMITs of groups, and the transactions they committed. */
  commits: number
  transactions: number
}

/** A transaction of a group, as the driver's lease of the connection marks it. */
export interface Member {
  inTransaction: boolean
  released: boolean
}

/** What group commit needs of the driver's one connection. */
export interface GroupConnection {
  /** Runs one of the group's own statements (SAVEPOINT, RELEASE, COMMIT, ROLLBACK). */
  sql(text: string): void
  /** BEGIN IMMEDIATE, the file's write lock taken first. */
  begin(): Promise<void>
  /** After a COMMIT or ROLLBACK: the file's write lock is handed on, once SQLite agrees. */
  stopWriting(): void
  /** Whether SQLite has a transaction open. */
  inTransaction(): boolean
  /** Hands the connection to its next caller. */
  handOn(): void
  /** Runs `fn` between two callers' uses of the connection, once the open group is committed. */
  exclusive(fn: () => void): Promise<void>
}

/**
 * The group commit of `config`, or none when every transaction commits alone (`maxTransactions` 1,
 * the default).
 */
export function groupCommit(
  config: { maxTransactions: number } | undefined,
  stats: GroupCommitStats,
  connection: GroupConnection,
): GroupCommit | undefined {
  const maxTransactions = config?.maxTransactions ?? 1
  if (!Number.isInteger(maxTransactions) || maxTransactions < 1) {
    throw new Error('groupCommit.maxTransactions must be a positive integer')
  }
  return maxTransactions === 1 ? undefined : new GroupCommit(maxTransactions, stats, connection)
}

export class GroupCommit {
  /** The real transaction open on the connection, if any. */
  private group: Group | undefined
  private commitScheduled = false

  constructor(
    private readonly maxTransactions: number,
    private readonly stats: GroupCommitStats,
    private readonly connection: GroupConnection,
  ) {}

  /** Starts a transaction: a savepoint of the open group, or of a new one. */
  async begin(): Promise<void> {
    if (!this.group) {
      await this.connection.begin()
      let resolve = () => {}
      let reject: (error: unknown) => void = () => {}
      const done = new Promise<void>((res, rej) => {
        resolve = res
        reject = rej
      })
      // Nobody may be waiting when the group fails as a whole; the members' commits report it.
      done.catch(() => {})
      this.group = { members: 0, done, resolve, reject }
    }
    this.connection.sql(`savepoint ${MEMBER}`)
  }

  async commit(member: Member): Promise<void> {
    const group = this.group
    if (!group || !member.inTransaction) throw new Error('no transaction to commit')
    this.connection.sql(`release ${MEMBER}`)
    member.inTransaction = false
    group.members++
    if (group.members >= this.maxTransactions) {
      this.commitNow()
      return
    }
    // The COMMIT waits for the event loop's next turn, so that the requests whose data has arrived
    // meanwhile run their transactions in this one (a transaction here runs without yielding to
    // other requests: its statements are synchronous). This one is answered only once that COMMIT
    // is done.
    await this.afterGroupCommit(member, group)
  }

  async rollback(member: Member): Promise<void> {
    // Not in a transaction any more: its group's COMMIT failed, and the group is rolled back.
    if (!member.inTransaction || member.released) {
      this.connection.stopWriting()
      return
    }
    // Only this transaction's work is undone; the group's other members keep theirs.
    const group = this.group
    this.connection.sql(`rollback to ${MEMBER}`)
    this.connection.sql(`release ${MEMBER}`)
    member.inTransaction = false
    // Why it failed may rest on what the group's earlier members wrote, not committed yet (a 409
    // naming another request's session): it is answered once that is committed, and fails with it.
    if (group !== undefined && group.members > 0) await this.afterGroupCommit(member, group)
  }

  /**
   * The connection was released: a group left open (by a transaction rolled back alone) is committed
   * in its turn.
   */
  connectionReleased(): void {
    if (this.group) this.scheduleGroupCommit()
  }

  /**
   * Hands the connection on (Kysely's release of this lease then changes nothing) and waits for the
   * group's COMMIT, on the event loop's next turn; fails if it fails.
   */
  private async afterGroupCommit(member: Member, group: Group): Promise<void> {
    member.released = true
    this.connection.handOn()
    this.scheduleGroupCommit()
    await group.done
  }

  /** COMMITs the open group on the event loop's next turn, after whoever holds the connection. */
  private scheduleGroupCommit(): void {
    if (this.commitScheduled) return
    this.commitScheduled = true
    setImmediate(() => {
      this.commitScheduled = false
      this.connection
        .exclusive(() => {})
        .catch(() => {
          // Reported to the group's members, whose commits fail with it.
        })
    })
  }

  /** COMMITs the open group, if any; its members' commits resolve, or fail with the error. */
  commitNow(): void {
    const group = this.group
    if (!group) return
    this.group = undefined
    try {
      this.connection.sql('commit')
    } catch (error) {
      // A failed COMMIT can leave the transaction open: end it, so the connection is clean.
      if (this.connection.inTransaction()) this.connection.sql('rollback')
      group.reject(error)
      throw error
    } finally {
      this.connection.stopWriting()
    }
    this.stats.commits++
    this.stats.transactions += group.members
    group.resolve()
  }
}

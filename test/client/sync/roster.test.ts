import { describe, expect, it } from 'vitest'
import { parseRoster, RosterError, type RosterIssue } from '../../../packages/client/src/sync/roster.js'

/** The issues a roster is refused with (fails the test when it is accepted). */
function issuesOf(text: string): RosterIssue[] {
  try {
    parseRoster(text)
  } catch (error) {
    expect(error).toBeInstanceOf(RosterError)
    return (error as RosterError).issues
  }
  throw new Error('the roster was accepted')
}

const HEADER = 'ident,name,employee_id\n'

describe('parseRoster: good rosters', () => {
  it('reads rows with their line numbers; empty name and employee_id are null; active defaults to true', () => {
    const rows = parseRoster(`${HEADER}W-1,Ada Lovelace,HR-7\nW-2,,\n\nW-3,"Hopper, Grace",HR-9\n`)
    expect(rows).toEqual([
      { line: 2, ident: 'W-1', name: 'Ada Lovelace', employee_id: 'HR-7', active: true },
      { line: 3, ident: 'W-2', name: null, employee_id: null, active: true },
      { line: 5, ident: 'W-3', name: 'Hopper, Grace', employee_id: 'HR-9', active: true },
    ])
  })

  it('reads the active column: true/false/1/0/yes/no in any case, empty meaning true', () => {
    const rows = parseRoster(
      'ident,name,employee_id,active\na,,,true\nb,,,FALSE\nc,,,1\nd,,,0\ne,,,Yes\nf,,,no\ng,,,\nh,,, no \n',
    )
    expect(rows.map((r) => [r.ident, r.active])).toEqual([
      ['a', true],
      ['b', false],
      ['c', true],
      ['d', false],
      ['e', true],
      ['f', false],
      ['g', true],
      ['h', false],
    ])
  })

  it('accepts the columns in any order and any case, a BOM and CRLF line ends', () => {
    const rows = parseRoster('\uFEFFActive,Employee_ID,IDENT,Name\r\nno,HR-1,W-1,Ada\r\n')
    expect(rows).toEqual([{ line: 2, ident: 'W-1', name: 'Ada', employee_id: 'HR-1', active: false }])
  })

  it('keeps the values as given (inner spaces, quotes, unicode) and counts limits in characters', () => {
    const ident = 'é'.repeat(64)
    const name = '😀'.repeat(200)
    const rows = parseRoster(`${HEADER}${ident},${name},"say ""hi"""\n`)
    expect(rows[0]).toMatchObject({ ident, name, employee_id: 'say "hi"' })
  })

  it('numbers a row after a quoted multi-line field by the line it starts on, with CRLF or LF', () => {
    for (const eol of ['\n', '\r\n']) {
      const rows = parseRoster(
        ['ident,name,employee_id', 'W-1,"two', 'lines",HR-1', '', 'W-2,b,HR-2', ''].join(eol),
      )
      expect(rows.map((r) => [r.ident, r.line, r.name])).toEqual([
        ['W-1', 2, 'two\nlines'],
        ['W-2', 5, 'b'],
      ])
    }
  })
})

describe('parseRoster: bad input names the line', () => {
  it('refuses an empty file', () => {
    expect(issuesOf('')).toEqual([{ line: 1, message: expect.stringMatching(/empty.*header/) }])
  })

  it('refuses a roster without a header row', () => {
    expect(issuesOf('W-1,Ada,HR-7\nW-2,Bob,HR-8\n')).toEqual([
      { line: 1, message: expect.stringMatching(/missing header.*ident,name,employee_id.*"W-1,Ada,HR-7"/) },
    ])
  })

  it('refuses a header with a missing, unknown or repeated column', () => {
    expect(issuesOf('ident,name\nW-1,Ada\n')).toEqual([
      { line: 1, message: expect.stringMatching(/lacks the column "employee_id"/) },
    ])
    expect(issuesOf('ident,name,employee_id,team\nW-1,Ada,HR-7,A\n')).toEqual([
      { line: 1, message: expect.stringMatching(/unknown column "team"/) },
    ])
    expect(issuesOf('ident,name,name,employee_id\nW-1,Ada,Ada,HR-7\n')).toEqual([
      { line: 1, message: expect.stringMatching(/"name" appears twice/) },
    ])
  })

  it('refuses a header-only roster (it would deactivate everyone)', () => {
    expect(issuesOf(HEADER)).toEqual([{ line: 1, message: expect.stringMatching(/no rows/) }])
  })

  it('refuses a row with too few or too many fields', () => {
    expect(issuesOf(`${HEADER}W-1,Ada,HR-7\nW-2,Bob\nW-3,Cy,HR-9,true\n`)).toEqual([
      { line: 3, message: 'expected 3 fields (ident,name,employee_id), found 2' },
      { line: 4, message: 'expected 3 fields (ident,name,employee_id), found 4' },
    ])
  })

  it('refuses a missing ident', () => {
    expect(issuesOf(`${HEADER}W-1,Ada,HR-7\n,Bob,HR-8\n`)).toEqual([{ line: 3, message: 'ident is missing' }])
  })

  it('refuses an ident with leading or trailing spaces', () => {
    expect(issuesOf(`${HEADER}W-1,Ada,HR-7\n W-2,Bob,HR-8\nW-3 ,Cy,HR-9\n"W-4\t",Di,\n`)).toEqual([
      { line: 3, message: 'ident " W-2" has leading or trailing spaces' },
      { line: 4, message: 'ident "W-3 " has leading or trailing spaces' },
      { line: 5, message: 'ident "W-4\\t" has leading or trailing spaces' },
    ])
  })

  it('refuses an ident with a line break in it', () => {
    expect(issuesOf(`${HEADER}"W-1\nX",Ada,HR-7\n`)).toEqual([
      { line: 2, message: 'ident "W-1\\nX" contains a line break' },
    ])
  })

  it('refuses an ident over 64, a name over 200 and an employee_id over 128 characters', () => {
    const issues = issuesOf(
      `${HEADER}${'i'.repeat(64)},${'n'.repeat(200)},${'e'.repeat(128)}\n` +
        `${'i'.repeat(65)},ok,ok\nW-3,${'n'.repeat(201)},\nW-4,,${'e'.repeat(129)}\n`,
    )
    expect(issues).toEqual([
      { line: 3, message: 'ident is 65 characters long; at most 64 are allowed' },
      { line: 4, message: 'name is 201 characters long; at most 200 are allowed' },
      { line: 5, message: 'employee_id is 129 characters long; at most 128 are allowed' },
    ])
  })

  it('refuses a bad active value', () => {
    expect(issuesOf('ident,name,employee_id,active\nW-1,Ada,HR-7,yes\nW-2,Bob,HR-8,maybe\n')).toEqual([
      { line: 3, message: 'active is "maybe"; expected true, false, 1, 0, yes or no' },
    ])
  })

  it('refuses a duplicate ident, naming both lines', () => {
    expect(issuesOf(`${HEADER}W-1,Ada,HR-7\nW-2,Bob,HR-8\n\nW-1,Ada again,HR-9\n`)).toEqual([
      { line: 5, message: 'duplicate ident "W-1", also on line 2' },
    ])
  })

  it('collects every problem of every row, in line order', () => {
    const issues = issuesOf(`ident,name,employee_id,active\n,x,,maybe\nok,,,\nok,,,\n`)
    expect(issues).toEqual([
      { line: 2, message: 'ident is missing' },
      { line: 2, message: 'active is "maybe"; expected true, false, 1, 0, yes or no' },
      { line: 4, message: 'duplicate ident "ok", also on line 3' },
    ])
  })

  it('refuses a malformed CSV line with the parser error and its line', () => {
    expect(issuesOf(`${HEADER}W-1,Ada,HR-7\nW-2,Bo"b,HR-8\n`)).toEqual([
      { line: 3, message: expect.stringMatching(/^malformed CSV: .*Invalid Opening Quote.*line 3/) },
    ])
    expect(issuesOf(`${HEADER}W-1,Ada,HR-7\nW-2,"Bob"x,HR-8\nW-3,,\n`)).toEqual([
      { line: 3, message: expect.stringMatching(/^malformed CSV: .*Invalid Closing Quote/) },
    ])
  })

  it('names the line where an unclosed quote opens', () => {
    expect(issuesOf(`${HEADER}W-1,Ada,HR-7\n\nW-2,"Bob,HR-8\nW-3,Cy,HR-9\n`)).toEqual([
      { line: 4, message: expect.stringMatching(/^malformed CSV: .*Quote Not Closed/) },
    ])
  })
})

// The JS half of the bridge (hooks/agent-cards.js) under `claude plugin test`: each test plays the Python
// side itself. It answers the module's `$.process.spawn` with a host that says hello on its stdout, and
// the module's `$.http.fetch` (POST /step over the host's socket) with the answers a host would give.
// The Python side itself is tested in tests/test_bridge.py; the real pair in tests/e2e/test_bridge_e2e.py.
//
// Run: `claude plugin test <folder>` where the folder holds the plugin (.claude-plugin/, hooks/) and this
// file; tests/e2e/test_plugin_kit.py builds such a folder and runs it.

import { expect, mock, test } from 'claude-code/testing'

const SOCKET = '/run/agent-cards-test/s'
const TOKEN = 'test-token'
const UNSURE = 'NOT RUN: the bridge stopped while {program} ran.'
const START = { cwd: '/project', surface: 'terminal', isInteractive: true }
const AGENT = {
  tool: 'Agent',
  tool_use_id: 'toolu_1',
  description: 'Fix auth',
  prompt: 'Fix the auth flow.',
  subagent_type: 'general-purpose',
}
const SPAWN = {
  tool_use_id: 'toolu_1',
  prompt: 'Fix the auth flow.',
  description: 'Fix auth',
  subagentType: 'general-purpose',
  background: true,
}

async function until(done, what) {
  for (let i = 0; i < 200; i++) {
    if (done()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`never happened: ${what}`)
}

// The Python side, played here. `answer(request, world)` gives the host's answer to one POST /step (an
// object, or a promise of one), or throws to make the fetch fail; `{ reject: text }` makes it reject with text.
// `start` is 'ok', or 'fails' for a Python that cannot start, or a function of the interpreter giving either.
// `kept`: a state the host tells the module right after its hello.
function pythonSide(on, answer, start = 'ok', env = { LICH_BIN: '/bin/lich', LICH_SESSION_ID: '3c4d', LICH_PROMPT_LANG: 'en' }, kept = null) {
  const world = { spawns: [], requests: [], toasts: [], natives: [], spawned: [], end: null }
  const ended = new Promise((resolve) => {
    world.end = resolve
  })
  mock.env(on, env)
  on('process.hookEnv', () => ({ value: { CLAUDE_PLUGIN_ROOT: '/plugin' } }))
  on('process.spawn', async function* ($, e) {
    world.spawns.push(e)
    const starts = typeof start === 'function' ? start(e.argv[0]) : start
    if (starts === 'fails') throw new Error(`ENOENT: Executable not found in $PATH: "${e.argv[0]}"`)
    const hello = { hello: 1, socket: SOCKET, token: TOKEN, python: '/usr/bin/python3.12', version: [3, 12, 1],
                    pid: 4242, texts: { 'bridge.unsure': UNSURE } }
    yield { stream: 'stdout', text: JSON.stringify(hello) + '\n' }
    if (kept !== null) yield { stream: 'stdout', text: JSON.stringify({ state: kept }) + '\n' }
    await ended
    return { code: 0, signal: null }
  })
  on('http.fetch', async ($, e) => {
    const init = e.init || {}
    expect(init.socketPath).toBe(SOCKET)
    expect(init.headers.authorization).toBe(`Bearer ${TOKEN}`)
    const request = JSON.parse(init.body)
    world.requests.push(request)
    const answered = await answer(request, world)
    if (answered && answered.reject) return { deny: answered.reject } // the module's fetch rejects with these words
    return { value: { status: 200, ok: true, headers: {}, text: JSON.stringify(answered) } }
  })
  on('ui.toast', ($, e) => {
    world.toasts.push(e.text)
    return { value: undefined }
  })
  on('session.start', ($, e) => ({ cwd: e.cwd }))
  on('tool.call', ($, e) => {
    world.natives.push(e)
    return { result: { native: e.tool, prompt: e.prompt } }
  })
  on('agent.spawn', ($, e) => {
    world.spawned.push(e)
    return { model: 'm', agentId: 'native-agent' }
  })
  return world
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const TAKEN = () => ({ kind: 'done', value: { result: 'taken' }, effects: [] })

function busyFor(ms) {
  // The CLI's loop held by synchronous work (a long redraw on a starved machine): no timer or answer is seen.
  const end = performance.now() + ms
  while (performance.now() < end);
}

async function started($, world) {
  await $.session.start(START)
  await until(() => world.spawns.length === 1, 'the host was spawned')
}

test('session.start spawns one host with the event on its stdin, and it never waits for it', async ($, on) => {
  const world = pythonSide(on, () => ({ kind: 'done', value: {}, effects: [] }))
  const result = await $.session.start(START)
  expect(result).toEqual({ cwd: '/project' })
  await until(() => world.spawns.length === 1, 'the host was spawned')
  const [spawn] = world.spawns
  expect(spawn.argv.slice(0, 4)).toEqual(['python3', '-I', '-S', '-c'])
  expect(spawn.env).toEqual({ CLAUDE_PLUGIN_ROOT: '/plugin' })
  const boot = JSON.parse(spawn.input)
  expect(boot.events).toEqual([{ event: 'session.start', e: START, result: { cwd: '/project' } }])
  expect(boot.env.LICH_BIN).toBe('/bin/lich')
  expect(boot.state).toBe(null)
  world.end()
})

test('the reads before the spawn are asked all at once, each name handed on as read', async ($, on) => {
  // Each read is a round trip to the engine: asked one after another, they kept a session's first Agent
  // call waiting for its host. Here each answer takes a timer's turn, and the most in flight at once is counted.
  let inFlight = 0
  let most = 0
  const spawns = []
  on('env.get', async ($, e) => {
    inFlight += 1
    most = Math.max(most, inFlight)
    await sleep(5)
    inFlight -= 1
    return { value: e.name === 'AGENT_CARDS_PYTHON' ? '/opt/python3' : `value of ${e.name}` }
  })
  on('process.hookEnv', () => ({ value: { CLAUDE_PLUGIN_ROOT: '/plugin' } }))
  on('process.spawn', async function* ($, e) {
    spawns.push(e)
    yield { stream: 'stderr', text: 'not a host\n' }
    return { value: { code: 1, signal: null } }
  })
  on('session.start', ($, e) => ({ cwd: e.cwd }))
  on('ui.toast', () => ({ value: undefined }))
  await $.session.start(START)
  await until(() => spawns.length === 1, 'the host was spawned')
  expect(most).toBe(6) // AGENT_CARDS_PYTHON and the five names the mod reads, in one round
  expect(spawns[0].argv[0]).toBe('/opt/python3')
  const names = ['LICH_BIN', 'LICH_PROMPT_LANG', 'LICH_SESSION_ID', 'LICH_SUBAGENT_CARDS', 'LICH_SUBAGENT_DEPTH']
  expect(JSON.parse(spawns[0].input).env).toEqual(Object.fromEntries(names.map((n) => [n, `value of ${n}`])))
})

// The plugin's store as the engine keeps it across sessions: `kept` is what an earlier session left there.
function storeSide(on, kept) {
  const store = { python: kept, sets: [], deletes: [] }
  on('store.get', ($, e) => ({ value: e.key === 'python' ? store.python : undefined }))
  on('store.set', ($, e) => {
    store.sets.push([e.key, e.value])
    store.python = e.value
    return { value: undefined }
  })
  on('store.delete', ($, e) => {
    store.deletes.push(e.key)
    store.python = undefined
    return { value: undefined }
  })
  return store
}

test("a session's first host starts as python3 on PATH, and what it ran as is kept for the next", async ($, on) => {
  const store = storeSide(on, undefined)
  const world = pythonSide(on, TAKEN)
  await started($, world)
  expect(world.spawns[0].argv[0]).toBe('python3')
  await until(() => store.sets.length === 1, 'the interpreter was kept')
  expect(store.sets).toEqual([['python', '/usr/bin/python3.12']])
  world.end()
})

test('the next session starts the kept interpreter directly, and keeps it as it is', async ($, on) => {
  const store = storeSide(on, '/usr/bin/python3.12')
  const world = pythonSide(on, TAKEN)
  await started($, world)
  expect(world.spawns[0].argv[0]).toBe('/usr/bin/python3.12')
  expect((await $.tool.call(AGENT)).result).toBe('taken')
  expect(store.sets).toEqual([])
  world.end()
})

test('a kept interpreter that is gone is forgotten, and PATH serves the session with no toast', async ($, on) => {
  const store = storeSide(on, '/gone/python3')
  const world = pythonSide(on, TAKEN, (argv0) => (argv0 === '/gone/python3' ? 'fails' : 'ok'))
  await $.session.start(START)
  expect((await $.tool.call(AGENT)).result).toBe('taken')
  expect(world.spawns.map((spawn) => spawn.argv[0])).toEqual(['/gone/python3', 'python3'])
  expect(store.deletes).toEqual(['python'])
  await until(() => store.sets.length === 1, 'the interpreter PATH gave was kept')
  expect(store.sets).toEqual([['python', '/usr/bin/python3.12']])
  expect(world.toasts).toEqual([])
  world.end()
})

test('AGENT_CARDS_PYTHON wins over the kept interpreter, and is not kept itself', async ($, on) => {
  const store = storeSide(on, '/usr/bin/python3.12')
  const env = { LICH_BIN: '/bin/lich', LICH_SESSION_ID: '3c4d', AGENT_CARDS_PYTHON: '/opt/py/bin/python3' }
  const world = pythonSide(on, TAKEN, 'ok', env)
  await started($, world)
  expect(world.spawns[0].argv[0]).toBe('/opt/py/bin/python3')
  expect((await $.tool.call(AGENT)).result).toBe('taken')
  expect(store.sets).toEqual([])
  world.end()
})

test('outside lich (no LICH_SESSION_ID) no host is spawned, and an Agent call goes to Claude Code', async ($, on) => {
  const world = pythonSide(on, () => ({ kind: 'done', value: {}, effects: [] }), 'ok', { LICH_BIN: '/bin/lich' })
  await $.session.start(START)
  const answer = await $.tool.call({ tool: 'Agent', description: 'd', prompt: 'p', subagent_type: 'general-purpose' })
  expect(world.spawns.length).toBe(0)
  expect(world.requests.length).toBe(0)
  expect(world.natives.length).toBe(1)
  expect(answer.result).toEqual({ native: 'Agent', prompt: 'p' })
})

test('calls asked at once reach the check beneath in the order asked, whichever answer comes back first', async ($, on) => {
  // Two Agent calls of one reply: the socket brings the second call's answer while the first's is still held.
  // Acted on as they came, the second would reach the permission check first, and its dialog would come first.
  let releaseFirst = () => {}
  const firstHeld = new Promise((resolve) => {
    releaseFirst = resolve
  })
  let secondAnswered = false
  const world = pythonSide(on, async (request) => {
    if (request.op === 'resume') return { kind: 'done', value: request.value, effects: [] }
    if (request.e.tool_use_id === 'toolu_1') await firstHeld
    else secondAnswered = true
    return { kind: 'next', e: request.e, effects: [] }
  })
  await started($, world)
  const first = $.tool.call(AGENT)
  const second = $.tool.call({ ...AGENT, tool_use_id: 'toolu_2', description: 'Fix logout' })
  await until(() => secondAnswered, "the second call's answer was sent")
  await sleep(30) // nothing to wait on: the second call must not move while the first's answer is held
  expect(world.natives).toEqual([])
  releaseFirst()
  await Promise.all([first, second])
  expect(world.natives.map((e) => e.tool_use_id)).toEqual(['toolu_1', 'toolu_2'])
  world.end()
})

test('each hook forwards to the host and returns its answer', async ($, on) => {
  const answers = {
    'tool.call:Agent': { result: { status: 'async_launched', agentId: 'session-2-9f81' } },
    'tool.call:TaskStop': { result: { task_id: 'session-2-9f81', task_type: 'local_agent' } },
    'agent.spawn': { deny: 'lich runs this agent as the card "Session 2" instead.' },
  }
  const world = pythonSide(on, (request) => {
    const key = request.event === 'tool.call' ? `tool.call:${request.e.tool}` : request.event
    return { kind: 'done', value: answers[key], effects: [] }
  })
  await started($, world)
  const taken = await $.tool.call(AGENT)
  expect(taken.result).toEqual(answers['tool.call:Agent'].result)
  const stopped = await $.tool.call({ tool: 'TaskStop', tool_use_id: 'toolu_2', task_id: 'session-2-9f81' })
  expect(stopped.result).toEqual(answers['tool.call:TaskStop'].result)
  const spawned = await $.agent.spawn(SPAWN)
  expect(String(spawned.deny)).toContain('lich runs this agent as the card "Session 2" instead.')
  expect(world.requests.map((r) => [r.op, r.event, r.hook])).toEqual([
    ['event', 'tool.call', 1],
    ['event', 'tool.call', 2],
    ['event', 'agent.spawn', 3],
  ])
  expect(world.requests[0].e).toMatchObject(AGENT)
  expect(world.requests[0].origin).toEqual({ plugin: 'engine', tier: 'core' })
  expect(world.natives).toEqual([])
  expect(world.spawned).toEqual([])
  expect(world.toasts).toEqual([])
  world.end()
})

test('a next request is honoured and its result resumed; toasts come with the answers', async ($, on) => {
  const world = pythonSide(on, (request) => {
    if (request.op === 'event') {
      return { kind: 'next', e: { ...request.e, prompt: 'Rewritten.' }, effects: [{ toast: 'first' }] }
    }
    expect(request).toMatchObject({ op: 'resume', id: world.requests[0].id })
    return { kind: 'done', value: { result: { host: 'saw', beneath: request.value.result } }, effects: [] }
  })
  await started($, world)
  const answer = await $.tool.call(AGENT)
  expect(world.natives.map((e) => e.prompt)).toEqual(['Rewritten.'])
  expect(answer.result).toEqual({ host: 'saw', beneath: { native: 'Agent', prompt: 'Rewritten.' } })
  expect(world.toasts).toEqual(['first'])
  world.end()
})

test('pending is polled until the host answers', async ($, on) => {
  const world = pythonSide(on, (request) => {
    if (world.requests.length < 3) return { kind: 'pending', busy: ['lich'], effects: [] }
    expect(request.op).toBe('poll')
    return { kind: 'done', value: { result: 'taken' }, effects: [] }
  })
  await started($, world)
  expect((await $.tool.call(AGENT)).result).toBe('taken')
  expect(world.requests.map((r) => r.op)).toEqual(['event', 'poll', 'poll'])
  world.end()
})

test('a host that cannot start: the calls run natively, with one toast', async ($, on) => {
  const world = pythonSide(on, () => {
    throw new Error('no host to ask')
  }, 'fails')
  await started($, world)
  await until(() => world.toasts.length === 1, 'the toast')
  expect((await $.tool.call(AGENT)).result).toEqual({ native: 'Agent', prompt: 'Fix the auth flow.' })
  expect((await $.tool.call({ ...AGENT, tool_use_id: 'toolu_2' })).result.native).toBe('Agent')
  expect(world.natives.length).toBe(2)
  expect(world.requests).toEqual([])
  expect(world.toasts.length).toBe(1)
  expect(world.toasts[0]).toContain('No Python 3.11+: set AGENT_CARDS_PYTHON. Agent calls run natively. python3: ')
  world.end()
})

test('a host that fails before next: native, with one toast for the session', async ($, on) => {
  const world = pythonSide(on, () => ({ kind: 'failed', error: 'the mod raised', calledNext: false, effects: [] }))
  await started($, world)
  expect((await $.tool.call(AGENT)).result).toEqual({ native: 'Agent', prompt: 'Fix the auth flow.' })
  expect((await $.tool.call({ ...AGENT, tool_use_id: 'toolu_2' })).result.native).toBe('Agent')
  expect(world.natives.length).toBe(2)
  expect(world.toasts.length).toBe(1)
  expect(world.toasts[0]).toContain('agent cards failed: agent ran natively. the mod failed: the mod raised')
  world.end()
})

test('a fetch that fails before next: native, with one toast', async ($, on) => {
  const world = pythonSide(on, () => {
    throw new Error('connection refused')
  })
  await started($, world)
  expect((await $.tool.call(AGENT)).result).toEqual({ native: 'Agent', prompt: 'Fix the auth flow.' })
  expect(world.natives.length).toBe(1)
  expect(world.toasts.length).toBe(1)
  await $.tool.call({ ...AGENT, tool_use_id: 'toolu_2' }) // a host started again is told why the last one went
  expect(world.spawns.length).toBe(2)
  expect(JSON.parse(world.spawns[0].input).after).toBe(null)
  expect(JSON.parse(world.spawns[1].input).after).toMatch(/^the event step failed: /)
  world.end()
})

test('a call whose step failed keeps no later call waiting for its answer', async ($, on) => {
  const world = pythonSide(on, (request) => {
    if (request.op === 'event' && request.e.tool_use_id === 'toolu_1') throw new Error('connection refused')
    return TAKEN()
  })
  await started($, world)
  expect((await $.tool.call(AGENT)).result).toEqual({ native: 'Agent', prompt: 'Fix the auth flow.' })
  expect((await $.tool.call({ ...AGENT, tool_use_id: 'toolu_2' })).result).toBe('taken')
  world.end()
})

test("a failure after next: next's result stands and nothing runs twice", async ($, on) => {
  const world = pythonSide(on, (request) => {
    if (request.op === 'event') return { kind: 'next', e: request.e, effects: [] }
    throw new Error('the host died')
  })
  await started($, world)
  const answer = await $.tool.call(AGENT)
  expect(answer.result).toEqual({ native: 'Agent', prompt: 'Fix the auth flow.' })
  expect(world.natives.length).toBe(1)
  expect(world.toasts).toEqual([])
  world.end()
})

test('a host lost before it answered, with the open it kept for the call: denied, never native', async ($, on) => {
  const kept = { workers: [], opens: [{ key: 'toolu_1', prompt: 'Fix the auth flow.', lich_bin: '/bin/lich' }] }
  const env = { LICH_BIN: '/bin/lich', LICH_SESSION_ID: '3c4d', LICH_PROMPT_LANG: 'en' }
  const world = pythonSide(on, () => {
    throw new Error('the host died')
  }, 'ok', env, kept)
  await started($, world)
  const answer = await $.tool.call(AGENT)
  expect(answer).toEqual({ deny: 'NOT RUN: the bridge stopped while lich ran.' })
  expect(world.natives).toEqual([])
  const other = await $.tool.call({ ...AGENT, tool_use_id: 'toolu_2' })  // no open kept for it: native
  expect(other.result).toEqual({ native: 'Agent', prompt: 'Fix the auth flow.' })
  world.end()
})

test('a host lost while a command runs for the call: denied, in the words the hello handed over', async ($, on) => {
  const world = pythonSide(on, (request) => {
    if (request.op === 'event') return { kind: 'pending', busy: ['lich'], effects: [] }
    throw new Error('the host died')
  })
  await started($, world)
  const answer = await $.tool.call(AGENT)
  expect(answer).toEqual({ deny: 'NOT RUN: the bridge stopped while lich ran.' })
  expect(world.natives).toEqual([])
  world.end()
})

test("a host slow to answer after next: the mod's answer still replaces next's", { timeoutMs: 30000 }, async ($, on) => {
  const world = pythonSide(on, async (request) => {
    if (request.op === 'event') return { kind: 'next', e: request.e, effects: [] }
    await sleep(6000) // past the limit for a step before next, which would have fallen back
    return { kind: 'done', value: { result: 'launched as a card' }, effects: [] }
  })
  await started($, world)
  expect((await $.tool.call(AGENT)).result).toBe('launched as a card')
  expect(world.natives.length).toBe(1)
  expect(world.spawns.length).toBe(1) // the host was kept
  world.end()
})

test('a loop held past the step limit does not make a live host look hung', { timeoutMs: 30000 }, async ($, on) => {
  const world = pythonSide(on, async () => {
    // The loop is held for 6 s from the start: the answer, due 5.1 s in, is read only after it, as the
    // limit's own timer is; the module counts the hold as a moment of waiting, not as 6 s of a hung host.
    setTimeout(() => busyFor(6000), 0)
    await sleep(5100)
    return { kind: 'done', value: { result: 'taken' }, effects: [] }
  })
  await started($, world)
  expect((await $.tool.call(AGENT)).result).toBe('taken')
  expect(world.natives).toEqual([])
  expect(world.toasts).toEqual([])
  expect(world.spawns.length).toBe(1)
  world.end()
})

// A newer render of the footer gives the older one up: its $ calls reject with these words (measured in 2.1.328).
const SUPERSEDED = 'ui.render: superseded state'
const FOOTER = { component: 'SessionMode', props: { modes: [] } }

function supersededOnce(when, otherwise) {
  // The host's answers: the first request `when` picks is given up as a newer render gives it up; the others
  // get `otherwise`'s answer.
  let first = true
  return (request) => {
    if (first && when(request)) {
      first = false
      return { reject: SUPERSEDED }
    }
    return otherwise(request)
  }
}

test('a render given up before next: the plain render, no toast, the same host', async ($, on) => {
  const world = pythonSide(on, supersededOnce((request) => request.event === 'ui.render', TAKEN))
  await started($, world)
  const drawn = await $.ui.render(FOOTER)
  expect(drawn.type).toBe('engine') // never a deny, which is no answer to a render
  expect(world.toasts).toEqual([])
  expect((await $.tool.call(AGENT)).result).toBe('taken')
  expect(world.spawns.length).toBe(1) // the host was not taken for a broken one
  world.end()
})

test('a render given up after next: next\'s render, the same host, told at the next request', async ($, on) => {
  const world = pythonSide(on, supersededOnce((request) => request.op === 'resume', (request) =>
    request.op === 'event' && request.event === 'ui.render' ? { kind: 'next', e: request.e, effects: [] } : TAKEN()))
  await started($, world)
  const drawn = await $.ui.render(FOOTER)
  expect(drawn.type).toBe('engine')
  expect((await $.tool.call(AGENT)).result).toBe('taken')
  expect(world.spawns.length).toBe(1)
  const render = world.requests.find((r) => r.event === 'ui.render')
  expect(world.requests[world.requests.length - 1].cancel).toEqual([render.id])
  world.end()
})

import t from 'tap'
import { layerOf, splitReport } from '../../bench/perf-split.ts'

// Rows as `perf report --no-children --sort dso,sym -n --stdio -g none` prints them (perf 6.1).
const REPORT = `# Overhead       Samples  Shared Object        Symbol
# ........  ............  ...................  ......
#
    12.20%          1000  [kernel.kallsyms]    [k] pvm_irq_enable
     1.93%           200  node                 [.] v8::internal::JsonParser<unsigned char>::ScanJsonString
     1.68%           100  node                 [.] Builtins_KeyedLoadIC_Megamorphic
     1.54%           100  node                 [.] sha256_block_data_order_shaext
     1.36%           100  libc.so.6            [.] _int_malloc
     0.78%           300  [JIT] tid 6112       [.] JS:*routeHandler /app/node_modules/fastify/lib/route.js:465:25
     0.50%            50  node                 [.] v8::internal::Heap::CollectGarbage
     0.10%            10  node                 [.] uv__io_poll
`

t.test('perf rows are charged to their layer, in µs per request', async (t) => {
  // 2,000 samples per second: one sample is 500 µs; over 100 requests, 5 µs per request.
  const layers = splitReport(REPORT, 100)
  t.same(Object.fromEntries(layers), {
    'kernel (syscalls, TCP, interrupts)': 5000,
    'V8 JSON and strings': 1000,
    'V8 builtins (property access, calls, promises)': 500,
    'OpenSSL (TLS records, hashes)': 500,
    'libc (malloc, memcpy)': 500,
    'JIT-compiled JavaScript': 1500,
    'V8 GC and allocation': 250,
    'Node, libuv, llhttp and other native': 50,
  })
})

t.test('a JavaScript function is never taken for a native layer by its name', async (t) => {
  t.equal(layerOf('[JIT] tid 1', false, 'JS:*sha256Json /app/x.js:1:1'), 'JIT-compiled JavaScript')
  t.equal(layerOf('node', false, 'JS:~JsonThing /app/x.js:1:1'), 'JIT-compiled JavaScript')
})

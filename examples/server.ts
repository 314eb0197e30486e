/**
 * The bundled example server (`npm start`): {@link runServer} from the library, started when this
 * file is run. What it does is documented in `lib/server.ts` and the README.
 */
import { isMainModule } from '../lib/is-main.js';
import { exitOnStartFailure, runServer } from '../lib/server.js';

if (isMainModule(import.meta.url)) {
  runServer().catch(exitOnStartFailure);
}

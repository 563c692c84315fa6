export { HOST_REQUIREMENTS } from '../../src/conformance/host-requirements.js';

// The page: registers the capture service worker and shows its state.
const status = document.getElementById('worker-status');

async function start() {
  if (!('serviceWorker' in navigator)) {
    status.textContent = 'This browser cannot run the capture worker.';
    return;
  }
  await navigator.serviceWorker.register('/sw.js', { type: 'module', scope: '/' });
  const registration = await navigator.serviceWorker.ready;
  status.textContent = `Capture worker ${registration.active.state}`;
}

start().catch((err) => {
  status.textContent = `Capture worker failed: ${err}`;
});

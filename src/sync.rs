//! The one lock policy of the crate.
//!
//! A lock poisoned by a panic is taken over as it is, never turned into a second panic: every
//! value the crate guards stays valid between statements (a table, a queue, a writer), a panic
//! in one pump must not take the other pump, the timers and the client's answers down with it,
//! and the panic itself is already reported where it happened.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::Duration;

/// Locks `mutex`, taking it over if a panic poisoned it.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks `mutex` if nobody holds it, under the same policy as [`lock`].
pub fn try_lock<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// Waits on `condvar` with `guard`, under the same policy as [`lock`].
pub fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    condvar.wait(guard).unwrap_or_else(PoisonError::into_inner)
}

/// Waits on `condvar` with `guard` at most `timeout`, under the same policy as [`lock`].
pub fn wait_timeout<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: Duration,
) -> MutexGuard<'a, T> {
    match condvar.wait_timeout(guard, timeout) {
        Ok((guard, _)) => guard,
        Err(poisoned) => poisoned.into_inner().0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_taken_over_with_its_value() {
        let mutex = std::sync::Arc::new(Mutex::new(1));
        let held = mutex.clone();
        let panicked = std::thread::spawn(move || {
            let mut value = held.lock().unwrap();
            *value = 2;
            panic!("poison it");
        })
        .join();
        assert!(panicked.is_err());
        assert!(mutex.is_poisoned());
        assert_eq!(*lock(&mutex), 2);
        assert_eq!(try_lock(&mutex).map(|value| *value), Some(2));
    }

    #[test]
    fn try_lock_gives_nothing_while_the_lock_is_held() {
        let mutex = Mutex::new(1);
        let held = lock(&mutex);
        assert!(try_lock(&mutex).is_none());
        drop(held);
        assert_eq!(try_lock(&mutex).map(|value| *value), Some(1));
    }
}
